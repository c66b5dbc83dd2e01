import { z, type PluginConfig } from '@drmas/core';
import { GROUP_KEY_NAMES, type GroupKeyName } from '../grouping/groupKeys.js';
import { KL_PENALTY_KINDS } from '../losses/klPenalty.js';
import { LOSS_AGGREGATIONS } from '../losses/aggregation.js';
import { TRAINABLE_VARIANTS } from '../losses/ppoClipLoss.js';
import { DPO_VARIANTS } from '../losses/dpoLoss.js';
import { STATISTICS_UNITS, type StatisticsUnit } from '../estimators/types.js';

/**
 * The estimator options, without defaults: `agents.<role>.advantageOptions` sets any of them for that role's rows,
 * over `algorithm`'s.
 */
const estimatorOptions = {
  /** Divide by the group std (GRPO, Dr. MAS); false gives Dr. GRPO's r - mean. */
  normalizeByStd: z.boolean(),
  epsilon: z.number().positive(),
  gamma: z.number().min(0).max(1),
  lam: z.number().min(0).max(1),
  stepAdvantageWeight: z.number(),
  /** RAE: decay alpha of each role's moving-average baseline (SPIRAL: 0.95). */
  raeDecay: z.number().min(0).lt(1),
  gigpoMode: z.enum(['mean_norm', 'mean_std_norm']),
  similarityThreshold: z.number().gt(0).max(1),
  /** Which rows share a baseline; each estimator has its own default (`drmas`: prompt_agent). */
  groupKey: z.enum(GROUP_KEY_NAMES as [GroupKeyName, ...GroupKeyName[]]),
  /**
   * The sample of a group's mean and std, independent of `groupKey`: every `turn`, or each `trajectory`'s rows of the
   * group averaged. Each estimator has its default (`grpo`: trajectory, `drmas`: turn).
   */
  statisticsUnit: z.enum(STATISTICS_UNITS as [StatisticsUnit, ...StatisticsUnit[]]),
  /** Keep turns of groups whose rewards are all equal out of the loss (they carry no signal). */
  excludeZeroStdGroups: z.boolean(),
};

/** `agents.<role>.advantageOptions`: estimator options for that role's rows, over `algorithm`'s. */
export const advantageOptionsSection = z.strictObject(
  Object.fromEntries(Object.entries(estimatorOptions).map(([key, schema]) => [key, schema.optional()])) as {
    [K in keyof typeof estimatorOptions]: z.ZodOptional<(typeof estimatorOptions)[K]>;
  },
);

/** The keys the algorithms plugin adds to the `algorithm` config section. */
export const algorithmSection = z.strictObject({
  normalizeByStd: estimatorOptions.normalizeByStd.default(true),
  epsilon: estimatorOptions.epsilon.default(1e-6),
  gamma: estimatorOptions.gamma.default(1),
  lam: estimatorOptions.lam.default(1),
  stepAdvantageWeight: estimatorOptions.stepAdvantageWeight.default(1),
  raeDecay: estimatorOptions.raeDecay.default(0.95),
  gigpoMode: estimatorOptions.gigpoMode.default('mean_norm'),
  similarityThreshold: estimatorOptions.similarityThreshold.optional(),
  groupKey: estimatorOptions.groupKey.optional(),
  statisticsUnit: estimatorOptions.statisticsUnit.optional(),
  excludeZeroStdGroups: estimatorOptions.excludeZeroStdGroups.default(false),
  loss: z
    .strictObject({
      variant: z.enum(TRAINABLE_VARIANTS).default('vanilla'),
      clipRatio: z.number().gt(0).lt(1).default(0.2),
      /** Defaults to `clipRatio`. */
      clipRatioLow: z.number().gt(0).lt(1).optional(),
      /** Defaults to `clipRatio`; above it is clip-higher (DAPO: 0.28). */
      clipRatioHigh: z.number().gt(0).optional(),
      /** Dual-clip bound for negative advantages. */
      clipRatioC: z.number().gt(1).default(3),
      /** Default `token-mean`; `seq-mean-token-mean` for `gspo` (the one veRL's GSPO uses). */
      aggregation: z.enum(LOSS_AGGREGATIONS).optional(),
      lossScaleFactor: z.number().positive().optional(),
      klCoef: z.number().min(0).default(0),
      klType: z.enum(KL_PENALTY_KINDS).default('low_var_kl'),
      /** Positive: an entropy bonus (veRL's entropy_coeff). Negative: entropy minimization, which sharpens the policy. */
      entropyCoef: z.number().default(0),
    })
    .prefault({}),
  /**
   * Online DPO: set, it replaces the policy loss in `drmas train`. From each rollout group, each agent's best turn
   * against its worst at the same step (ties skipped) is a preference pair for the DPO loss.
   */
  dpo: z
    .strictObject({
      /** TRL's beta (for ipo, tau). */
      beta: z.number().positive().default(0.1),
      loss: z.enum(DPO_VARIANTS).default('sigmoid'),
      /** Probability that a label is flipped: cDPO for sigmoid, the noise rate of robust. */
      labelSmoothing: z.number().min(0).lt(0.5).default(0),
      /** `initial`: a frozen copy of the initial weights; `rollout`: the policy that sampled the step (no copy kept). */
      reference: z.enum(['initial', 'rollout']).default('initial'),
    })
    .optional(),
  dynamicSampling: z
    .strictObject({
      /** Drop groups whose episode outcomes are all equal and sample more (DAPO). */
      enabled: z.boolean().default(false),
      /** Rollout rounds at most, the first included (veRL's max_num_gen_batches). */
      maxRounds: z.number().int().min(1).max(1_000).default(10),
    })
    .prefault({}),
});

export type AlgorithmSettings = z.infer<typeof algorithmSection> & { advantage?: string };

export type AdvantageOptionsSettings = z.infer<typeof advantageOptionsSection>;

/** The config sections the algorithms plugin declares (its `configSchema`). */
export const algorithmsSchema = {
  algorithm: algorithmSection,
  agents: z.strictObject({ advantageOptions: advantageOptionsSection.optional() }),
};

/** The run's config as the algorithms plugin reads it: `algorithm` and `agents.<role>.advantageOptions` typed from its schema. */
export type AlgorithmsConfig = PluginConfig<typeof algorithmsSchema>;

declare module '@drmas/core' {
  interface AlgorithmConfig extends z.input<typeof algorithmSection> {}
  interface AgentConfig {
    /** Estimator options for this role's rows, over `algorithm`'s (with `advantage`, for its own estimator). */
    advantageOptions?: z.input<typeof advantageOptionsSection>;
  }
}
