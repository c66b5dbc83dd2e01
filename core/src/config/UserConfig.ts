import type { PluginSpec, PresetSpec } from '../plugins/Plugin.js';

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
}

export interface EvalConfig {
  /** Run the `evaluate` hook every N steps (0: never during training). */
  every?: number;
  /** Run the `evaluate` hook after the last step. */
  atEnd?: boolean;
  /** Also run it before the first step (as step 0). */
  atStart?: boolean;
}

export interface EnvConfig {
  /** The environment, by name (`math`, `search`, ...); environment plugins provide them. */
  name?: string;
  /** Seed of task generation, splits and epoch shuffles. */
  seed?: number;
  /** Environment steps per episode. */
  maxSteps?: number;
  /** Held-out share of a task set without its own test split. */
  testFraction?: number;
}

/** A config file as the user writes it. Sections other than these are declared by plugins. */
export interface UserConfig {
  presets?: PresetSpec[];
  plugins?: PluginSpec[];
  /** Physical models by id: backend, architecture or checkpoint, optimizer (keys declared by backend plugins). */
  models?: Record<string, Record<string, unknown>>;
  /** Agent roles: the model id each uses, sampling and training overrides. */
  agents?: Record<string, Record<string, unknown>>;
  algorithm?: { advantage?: string; [key: string]: unknown };
  /** Plugins add keys of their own to these sections (`trainer.logRollouts`, `eval.k`, ...). */
  trainer?: TrainerConfig & Record<string, unknown>;
  eval?: EvalConfig & Record<string, unknown>;
  /** Environment plugins add their keys (`env.levels`, `env.topk`, ...). */
  env?: EnvConfig & Record<string, unknown>;
  [section: string]: unknown;
}

/** Gives a config object its type; returns it unchanged. */
export function defineConfig(config: UserConfig): UserConfig {
  return config;
}
