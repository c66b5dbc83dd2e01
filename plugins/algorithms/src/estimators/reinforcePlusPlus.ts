import { maskAdvantages } from '../kernels/broadcast.js';
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
  compute(view, options) {
    const { responseLength: cols, tokenRewards, responseMask, advantages, returns } = view.columns;
    for (const row of view.rows) {
      const base = row * cols;
      let running = 0;
      for (let t = cols - 1; t >= 0; t--) {
        running = tokenRewards[base + t]! + options.gamma * running;
        returns[base + t] = running;
        running *= responseMask[base + t]!;
      }
    }
    maskedWhiten(view, returns, advantages, 'responseMask');
    maskAdvantages(view);
  },
};
