import type { EstimatorDefinition } from './types.js';

/**
 * Mirrors veRL `compute_remax_outcome_advantage` (https://arxiv.org/abs/2310.10505): returns = reverse cumulative
 * sum of masked rewards; advantages = returns - baseline reward * mask. Not whitened.
 */
export const remax: EstimatorDefinition = {
  name: 'remax',
  requires: ['baselineRewards'],
  compute(batch) {
    const { rows, cols, tokenRewards, responseMask } = batch;
    const baselines = batch.baselineRewards as ArrayLike<number>;
    const returns = new Float64Array(rows * cols);
    const advantages = new Float64Array(rows * cols);
    for (let r = 0; r < rows; r++) {
      const base = r * cols;
      const baseline = baselines[r]!;
      let running = 0;
      for (let t = cols - 1; t >= 0; t--) {
        const m = responseMask[base + t]!;
        running += tokenRewards[base + t]! * m;
        returns[base + t] = running;
        advantages[base + t] = running - baseline * m;
      }
    }
    return { advantages, returns };
  },
};
