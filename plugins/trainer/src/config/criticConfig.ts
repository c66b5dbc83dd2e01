import { LIMITS, z, type ResolvedConfig } from '@drmas/core';
import { LOSS_AGGREGATIONS } from '@drmas/plugin-algorithms';
import { optimizerSection, spikeGuardSection, TRAINER_LIMITS } from './trainingConfig.js';

/**
 * Which critics a run has: `ppo`, one per worker group over its own rows; `ippo`, one per agent role over that role's
 * own turns (its own observation); `mappo`, one shared by every agent over the episode's joint context; `happo`,
 * MAPPO's centralized critic with the policies updated one role after another (`critic.happo`); `vdn` and `qmix`,
 * IPPO's per-role critics mixed into a team value (a sum, or QMIX's monotonic network: `critic.mixer`), each turn
 * credited with its agent's share of the team's TD error.
 */
export const CRITIC_LEARNERS = ['ppo', 'ippo', 'mappo', 'happo', 'vdn', 'qmix'] as const;
export type CriticLearnerName = (typeof CRITIC_LEARNERS)[number];

const betas = z.tuple([z.number().min(0).lt(1), z.number().min(0).lt(1)]);

/**
 * `critic.happo`: HAPPO's sequential policy update (Kuba et al. 2022). Each step the trainable roles are updated one
 * after another; a role's advantages are multiplied by M, the clipped product of the probability ratios new/old of the
 * roles updated before it at the same joint action (a trajectory's turns at one round).
 */
export const happoSection = z
  .strictObject({
    /** `random`: a permutation drawn each step from trainer.seed and the step; or every trainable role, in order. */
    order: z.union([z.literal('random'), z.array(z.string().min(1)).min(1)]).default('random'),
    /**
     * `sequence`: one ratio per turn, `sequenceRatio` over its tokens, multiplied over the earlier roles' turns;
     * `token`: per response position, the earlier roles' token ratios at that position multiplied (HAPPO's
     * per-action-dimension factor, with token positions as the dimensions).
     */
    ratio: z.enum(['sequence', 'token']).default('sequence'),
    /** A turn's ratio: `product` of its token ratios (its probability ratio) or their `geometric-mean`. */
    sequenceRatio: z.enum(['product', 'geometric-mean']).default('product'),
    /** M is clipped to [low, high] before it multiplies the advantages. */
    factorClip: z.tuple([z.number().min(0), z.number().positive()]).default([0.5, 2]),
    /** > 0: agent-by-agent training: one role per step, the next one every this many steps (MARFT's agent_iteration_interval). */
    roundRobinEvery: z.number().int().min(0).max(LIMITS.steps).default(0),
  })
  .refine((happo) => happo.factorClip[0] <= 1 && happo.factorClip[1] >= 1, {
    message: 'factorClip must hold 1: [low <= 1, high >= 1]',
    path: ['factorClip'],
  });

export type HappoSettings = z.output<typeof happoSection>;

/**
 * `critic.mixer`: the team value of `learner: vdn | qmix` over each joint step (a trajectory's turns at one environment
 * step) and how QMIX's mixing network trains (pymarl's QMIX defaults where they apply).
 */
export const mixerSection = z.strictObject({
  /** Discount between joint steps of the team's TD(lambda) targets. */
  gamma: z.number().min(0).max(1).default(1),
  /** TD(lambda) between joint steps (pymarl's td_lambda: 0.8). */
  lambda: z.number().min(0).max(1).default(0.8),
  /** Size of the state embedding: mean-pooled fixed random vectors of the state's tokens (QMIX only). */
  stateDim: z.number().int().min(1).max(1024).default(32),
  /** QMIX's mixing embedding (pymarl's mixing_embed_dim: 32). */
  embedDim: z.number().int().min(1).max(256).default(32),
  /** Adam steps of the mixing network per training step, on all of the step's joint steps. */
  updates: z.number().int().min(1).max(TRAINER_LIMITS.epochs).default(1),
  optimizer: z
    .strictObject({
      lr: z.number().positive().default(5e-4),
      betas: betas.default([0.9, 0.999]),
      eps: z.number().positive().default(1e-8),
      maxGradNorm: z.number().min(0).default(10),
    })
    .prefault({}),
});

export type MixerSettings = z.output<typeof mixerSection>;

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
  aggregation: z.enum(LOSS_AGGREGATIONS).default('token-mean'),
  /**
   * AdamW of every critic (veRL's critic optimizer: lr 1e-5, weight decay 0.01, grad clip 1), and its learning-rate
   * schedule over the run's training steps, as a model's (`schedule`, `warmupSteps`; veRL's critic `warmup_style`).
   */
  optimizer: z
    .strictObject({
      lr: z.number().positive().default(1e-5),
      betas: betas.default([0.9, 0.999]),
      eps: z.number().positive().default(1e-8),
      weightDecay: z.number().min(0).default(0.01),
      maxGradNorm: z.number().min(0).default(1),
      schedule: optimizerSection.shape.schedule,
      warmupSteps: optimizerSection.shape.warmupSteps,
    })
    .prefault({}),
  /**
   * Watch each critic optimizer step's pre-clip gradient norm for spikes, as `models.<id>.spikeGuard` does a policy's:
   * `log` or `skip` (a critic has no rollback).
   */
  spikeGuard: spikeGuardSection
    .refine((guard) => guard.action !== 'rollback', {
      message: 'a critic has no rollback: use "skip" (the step is dropped before it is applied) or "log"',
      path: ['action'],
    })
    .optional(),
  epochs: z.number().int().positive().max(TRAINER_LIMITS.epochs).optional(),
  miniBatches: z.number().int().positive().max(TRAINER_LIMITS.rows).optional(),
  microBatchSize: z.number().int().positive().max(TRAINER_LIMITS.rows).optional(),
  /** The sequential update of `learner: happo` (ignored by the other learners). */
  happo: happoSection.prefault({}),
  /** The team value of `learner: vdn | qmix` (ignored by the other learners). */
  mixer: mixerSection.prefault({}),
});

export type CriticSettings = z.output<typeof criticSection>;

/** The `critic` section of a resolved config. */
export function criticSettings(config: ResolvedConfig): CriticSettings {
  return config.critic as CriticSettings;
}

declare module '@drmas/core' {
  interface ConfigSections {
    /** Value models (critics) for `algorithm.advantage: gae`, and the learner that places them (ppo, ippo, mappo, happo, vdn, qmix). */
    critic?: z.input<typeof criticSection>;
  }
}
