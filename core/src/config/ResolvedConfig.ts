import { createToken } from '../di/Token.js';
import type { EvalConfig, TrainerConfig } from './UserConfig.js';

/**
 * The merged, validated config a run uses: preset defaults, then the user's file, then `--set` overrides, with
 * schema defaults filled in. `presets` and `plugins` hold the names as resolved.
 */
export interface ResolvedConfig {
  presets: string[];
  plugins: string[];
  models: Record<string, Record<string, unknown>>;
  agents: Record<string, Record<string, unknown>>;
  algorithm: { advantage?: string; [key: string]: unknown };
  trainer: Required<Omit<TrainerConfig, 'runName'>> & { runName?: string };
  eval: Required<EvalConfig> & Record<string, unknown>;
  [section: string]: unknown;
}

/** The resolved config of the run, bound in the container by the kernel. */
export const ResolvedConfig = createToken<ResolvedConfig>('ResolvedConfig', { label: 'resolved config' });
