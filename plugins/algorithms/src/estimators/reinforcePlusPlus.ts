import { maskedWhiten } from '../kernels/maskedStatistics.js';
import type { EstimatorDefinition } from './types.js';

/**
 * Mirrors veRL `compute_reinforce_plus_plus_outcome_advantage` (https://arxiv.org/abs/2501.03262):
 * G_t = r_t + gamma G_{t+1}, with the running return reset after a position whose mask is 0;
 * advantages = batch masked whitening of G, times the mask; returns = G.
 */
export const reinforcePlusPlus: EstimatorDefinition = {
  name: 'reinforce_plus_plus',
  requires: [],
  compute(batch, options) {
    const { rows, cols, tokenRewards, responseMask } = batch;
    const returns = new Float64Array(rows * cols);
    for (let r = 0; r < rows; r++) {
      const base = r * cols;
      let running = 0;
      for (let t = cols - 1; t >= 0; t--) {
        running = tokenRewards[base + t]! + options.gamma * running;
        returns[base + t] = running;
        running *= responseMask[base + t]!;
      }
    }
    const advantages = maskedWhiten(returns, responseMask, 'responseMask');
    for (let i = 0; i < advantages.length; i++) advantages[i]! *= responseMask[i]!;
    return { advantages, returns };
  },
};
