import type { PluginSpec, PresetSpec } from '../plugins/Plugin.js';
import type { RolloutServer } from './configSchema.js';

/*
 * A config as the user writes it is typed from the sections core declares plus those each plugin adds by declaration
 * merging, so every key completes in an editor and a misspelt one fails to compile:
 *
 *   declare module '@drmas/core' {
 *     interface ConfigSections { orchestra?: OrchestraConfig }   // a section of the plugin's own
 *     interface AgentConfig { sampling?: SamplingConfig }         // keys added to a core section or entry
 *   }
 *
 * A plugin's augmentation is in scope once its types are: importing `defineConfig` from a preset brings every plugin
 * the preset lists (`import { defineConfig } from '@drmas/preset-math'`).
 */

/** `trainer`: the run's length, seed and output (the trainer plugin adds its keys). */
export interface TrainerConfig {
  /** Number of training steps. */
  steps?: number;
  /** Seed of every random generator in the run. */
  seed?: number;
  /** Folder that receives run directories. */
  outputDir?: string;
  /** Name of the run directory; defaults to a timestamp. */
  runName?: string;
  /** Save a checkpoint every N steps (0: only at the end). */
  saveEvery?: number;
  /** Checkpoints to keep. */
  keepLast?: number;
  /** Memory a step may plan to fill: `8GiB`, `512MiB`, `4GB` or bytes (default: 75% of the machine's, at most wasm's 4 GiB). */
  memoryBudget?: number | string;
}

/** `eval`: when evaluation runs (the plugin that evaluates adds how). */
export interface EvalConfig {
  /** Run the `evaluate` hook every N steps (0: never during training). */
  every?: number;
  /** Run the `evaluate` hook after the last step. */
  atEnd?: boolean;
  /** Also run it before the first step (as step 0). */
  atStart?: boolean;
}

/** `env`: the environment and the keys every environment shares (environment plugins add theirs). */
export interface EnvConfig {
  /** The environment, by name (`math`, `search`, ...); environment plugins provide them. */
  name?: string;
  /** Seed of task generation, splits and epoch shuffles. */
  seed?: number;
  /** Rounds per episode: in a round the agents act, then the environment takes the action. */
  maxRounds?: number;
  /** @deprecated since 0.2.0: `maxRounds` (read as it, with a warning). */
  maxSteps?: number;
  /** Held-out share of a task set without its own test split. */
  testFraction?: number;
}

/** `algorithm`: the advantage estimator (the algorithms plugin adds the loss and the rest). */
export interface AlgorithmConfig {
  /** An advantage estimator by name (`drmas`, `grpo`, ...; `drmas info` lists them). */
  advantage?: string;
}

/** `models.<id>`: one physical model (the trainer adds `optimizer`, backends their own keys). */
export interface ModelConfig {
  /** Backend that trains this model (a BackendFactory name). */
  backend?: string;
  /**
   * Backend that samples for this model when it is not the trainer (e.g. `onnx`), or a server that samples it
   * (`{ kind: 'vllm' | 'sglang', url }`, with the rollout-remote plugin); weights sync after updates.
   */
  rollout?: string | RolloutServer;
  /** `tiny` / `small` (built in, initialised from `seed`) or a Hugging Face checkpoint folder. */
  model: string;
  /** Architecture of a built-in model (LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM). */
  architecture?: string;
  /** Seed of a built-in model's initialisation (default: trainer.seed). */
  seed?: number;
  /** Compute runtime of the backend (`auto` picks the best installed). */
  runtime?: string;
}

/** `agents.<role>`: one agent role (the trainer adds `train`, orchestras their prompt and sampling keys). */
export interface AgentConfig {
  /** The model id (under `models`) this agent runs on; agents on one id share a worker group. */
  model?: string;
  /** The advantage estimator of this role's rows (a name as for `algorithm.advantage`), run on them alone. */
  advantage?: string;
}

/** The sections of a config; plugins add sections of their own here. */
export interface ConfigSections {
  /** Physical models by id. */
  models?: Record<string, ModelConfig>;
  /** Agent roles: the model each uses, and its sampling and training settings. */
  agents?: Record<string, AgentConfig>;
  algorithm?: AlgorithmConfig;
  trainer?: TrainerConfig;
  eval?: EvalConfig;
  env?: EnvConfig;
}

/** A config file as the user writes it. */
export interface UserConfig extends ConfigSections {
  presets?: PresetSpec[];
  plugins?: PluginSpec[];
}

/**
 * A config as a preset's defaults: any section in part. Models may omit `model` (the user's config or another
 * preset can give it).
 */
export type PresetConfig = Omit<Partial<UserConfig>, 'models'> & { models?: Record<string, Partial<ModelConfig>> };

/** Gives a config object its type (every section core and the plugins in scope declare); returns it unchanged. */
export function defineConfig(config: UserConfig): UserConfig {
  return config;
}
