import { z, type ResolvedConfig } from '@drmas/core';
import { LOSS_AGGREGATIONS, type LossAggregation } from '@drmas/plugin-algorithms';
import { TRAINER_LIMITS } from './trainingConfig.js';

/**
 * Which critics a run has: `ppo`, one per worker group over its own rows; `ippo`, one per agent role over that role's
 * own turns (its own observation); `mappo`, one shared by every agent over the episode's joint context.
 */
export const CRITIC_LEARNERS = ['ppo', 'ippo', 'mappo'] as const;
export type CriticLearner = (typeof CRITIC_LEARNERS)[number];

const betas = z.tuple([z.number().min(0).lt(1), z.number().min(0).lt(1)]);

/**
 * `critic`: value models for critic-based estimators (`algorithm.advantage: gae`). Absent `learner`, the run has no
 * critic. Epochs, mini-batches and micro-batch size default to those of the policy the critic's rows train.
 */
export const criticSection = z.strictObject({
  learner: z.enum(CRITIC_LEARNERS).optional(),
  /** The critic's trunk: a checkpoint folder or `tiny`/`small` (default: the policy model of its rows' worker group). */
  model: z.string().min(1).optional(),
  /** A value head on the policy's own trunk (read, not trained by the value loss) instead of a decoder of its own. */
  shareTrunk: z.boolean().default(false),
  /** veRL's `cliprange_value`: how far a prediction may move from the value its batch was estimated with. */
  clipRange: z.number().positive().default(0.5),
  aggregation: z.enum(LOSS_AGGREGATIONS as [LossAggregation, ...LossAggregation[]]).default('token-mean'),
  /** AdamW of every critic (veRL's critic optimizer: lr 1e-5, weight decay 0.01, grad clip 1). */
  optimizer: z
    .strictObject({
      lr: z.number().positive().default(1e-5),
      betas: betas.default([0.9, 0.999]),
      eps: z.number().positive().default(1e-8),
      weightDecay: z.number().min(0).default(0.01),
      maxGradNorm: z.number().min(0).default(1),
    })
    .prefault({}),
  epochs: z.number().int().positive().max(TRAINER_LIMITS.epochs).optional(),
  miniBatches: z.number().int().positive().max(TRAINER_LIMITS.rows).optional(),
  microBatchSize: z.number().int().positive().max(TRAINER_LIMITS.rows).optional(),
});

export type CriticSettings = z.output<typeof criticSection>;

/** The `critic` section of a resolved config. */
export function criticSettings(config: ResolvedConfig): CriticSettings {
  return (config as unknown as { critic: CriticSettings }).critic;
}

declare module '@drmas/core' {
  interface ConfigSections {
    /** Value models (critics) for `algorithm.advantage: gae`, and the learner that places them (ppo, ippo, mappo). */
    critic?: z.input<typeof criticSection>;
  }
}
