import { maskedWhiten } from '../kernels/maskedStatistics.js';
import type { EstimatorDefinition } from './types.js';

/**
 * Mirrors veRL `compute_gae_advantage_return`: backwards, delta_t = r_t + gamma nv - V_t and
 * a_t = delta_t + gamma lam last; nv and last take V_t and a_t where the mask is 1 and are carried
 * through masked (tool / padding) tokens. returns = a + V; advantages = batch masked whitening of a.
 * As in veRL the whitened advantages are not multiplied by the mask.
 */
export const gae: EstimatorDefinition = {
  name: 'gae',
  requires: ['values'],
  compute(view, options) {
    const { responseLength: cols, tokenRewards, responseMask, advantages, returns } = view.columns;
    const values = view.columns.values as ArrayLike<number>;
    const { gamma, lam } = options;
    // The raw GAE goes into `advantages`, whitened there once every row has it.
    const raw = advantages;
    for (const row of view.rows) {
      const base = row * cols;
      let nextValue = 0;
      let last = 0;
      for (let t = cols - 1; t >= 0; t--) {
        const i = base + t;
        const v = values[i]!;
        const m = responseMask[i]!;
        const delta = tokenRewards[i]! + gamma * nextValue - v;
        const a = delta + gamma * lam * last;
        nextValue = v * m + (1 - m) * nextValue;
        last = a * m + (1 - m) * last;
        raw[i] = last;
        returns[i] = last + v;
      }
    }
    maskedWhiten(view, raw, advantages, 'responseMask');
  },
};
