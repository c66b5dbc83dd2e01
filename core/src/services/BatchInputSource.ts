import type { StepContext } from '../data/StepContext.js';
import type { TrainingBatch } from '../data/TrainingBatch.js';
import { createToken } from '../di/Token.js';

/** Batch columns an estimator may need beyond rewards, masks and ids, each filled by the plugin that can. */
export type BatchInput = 'values' | 'baselineRewards' | 'observations';

/** What each input is, for messages. */
export const BATCH_INPUTS: Readonly<Record<BatchInput, string>> = Object.freeze({
  values: 'critic values at every response token (`TrainingBatch.values`), from a critic model',
  baselineRewards: 'the reward of a greedy rollout of each prompt (`TrainingBatch.baselineRewards`)',
  observations: 'the environment observation each turn acted on (`TrainingBatch.observations`)',
});

/** How a config gets an input supplied, where a plugin of this repository supplies it from a config key. */
export const BATCH_INPUT_HINTS: Readonly<Partial<Record<BatchInput, string>>> = Object.freeze({
  values: 'set critic.learner (ppo, ippo, mappo, happo, vdn or qmix) to train critics with the trainer plugin',
});

/**
 * Fills one input column of a step's batch, when the configured estimator needs it: right before the estimator
 * runs, in the `advantage` hook. Provided by name (the input it fills): `ctx.provide(BatchInputSource, 'observations', source)`.
 */
export interface BatchInputSource {
  fill(batch: TrainingBatch, step: StepContext): void | Promise<void>;
}
export const BatchInputSource = createToken<BatchInputSource>('BatchInputSource', { label: 'batch input source', named: true });
