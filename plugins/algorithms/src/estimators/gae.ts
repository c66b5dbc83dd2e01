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
  compute(batch, options) {
    const { rows, cols, tokenRewards, responseMask } = batch;
    const values = batch.values as ArrayLike<number>;
    const { gamma, lam } = options;
    const raw = new Float64Array(rows * cols);
    const returns = new Float64Array(rows * cols);
    for (let r = 0; r < rows; r++) {
      const base = r * cols;
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
    const advantages = maskedWhiten(raw, responseMask, 'responseMask');
    return { advantages, returns };
  },
};
