import type { EstimatorDefinition } from './types.js';

/**
 * Mirrors veRL `compute_remax_outcome_advantage` (https://arxiv.org/abs/2310.10505): returns = reverse cumulative
 * sum of masked rewards; advantages = returns - baseline reward * mask. Not whitened.
 */
export const remax: EstimatorDefinition = {
  name: 'remax',
  requires: ['baselineRewards'],
  compute(view) {
    const { responseLength: cols, tokenRewards, responseMask, advantages, returns } = view.columns;
    const baselines = view.columns.baselineRewards as ArrayLike<number>;
    for (const row of view.rows) {
      const base = row * cols;
      const baseline = baselines[row]!;
      let running = 0;
      for (let t = cols - 1; t >= 0; t--) {
        const m = responseMask[base + t]!;
        running += tokenRewards[base + t]! * m;
        returns[base + t] = running;
        advantages[base + t] = running - baseline * m;
      }
    }
  },
};
