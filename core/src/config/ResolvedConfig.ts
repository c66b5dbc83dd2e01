import { createToken } from '../di/Token.js';
import type { EnvSettings, RolloutServer } from './configSchema.js';

/** `models.<id>` after validation (the trainer adds `optimizer`, backend plugins their own keys). */
export interface ModelSettings {
  backend: string;
  model: string;
  architecture?: string;
  seed?: number;
  runtime: string;
  /** Backend that samples for this model when it is not the trainer (e.g. `onnx`), or a server that samples it. */
  rollout?: string | RolloutServer;
  [key: string]: unknown;
}

/** `agents.<role>` after validation (the trainer adds `train`, orchestra plugins sampling and prompt keys). */
export interface AgentSettings {
  model?: string;
  /** The advantage estimator of this role's rows, over `algorithm.advantage`. */
  advantage?: string;
  [key: string]: unknown;
}

/**
 * The merged, validated config a run uses: preset defaults, then the user's file, then `--set` overrides, with
 * schema defaults filled in. `presets` and `plugins` hold the names as resolved.
 */
export interface ResolvedConfig {
  presets: string[];
  plugins: string[];
  models: Record<string, ModelSettings>;
  agents: Record<string, AgentSettings>;
  algorithm: { advantage?: string; [key: string]: unknown };
  trainer: {
    steps: number;
    seed: number;
    outputDir: string;
    runName?: string;
    saveEvery: number;
    keepLast: number;
    memoryBudget?: number | string;
    [key: string]: unknown;
  };
  eval: { every: number; atEnd: boolean; atStart: boolean; [key: string]: unknown };
  env: EnvSettings & Record<string, unknown>;
  [section: string]: unknown;
}

/** The resolved config of the run, bound in the container by the kernel. */
export const ResolvedConfig = createToken<ResolvedConfig>('ResolvedConfig', { label: 'resolved config' });
