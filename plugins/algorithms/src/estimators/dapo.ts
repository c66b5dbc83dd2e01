import { grpo } from './grpo.js';
import type { AdvantageEstimator } from './types.js';

/**
 * DAPO (https://arxiv.org/abs/2503.14476) as a named configuration: GRPO advantages, clip-higher
 * (low 0.2, high 0.28), token-mean aggregation and dynamic sampling (drop groups whose rewards are all equal).
 */
export const DAPO_CONFIG = {
  estimator: 'grpo',
  clipRatioLow: 0.2,
  clipRatioHigh: 0.28,
  aggregation: 'token-mean',
  dynamicSampling: true,
} as const;

export const dapo: AdvantageEstimator = { ...grpo, name: 'dapo' };
