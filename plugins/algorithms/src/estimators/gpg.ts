import { broadcastRows } from '../kernels/broadcast.js';
import { groupStatistics } from '../kernels/groupStatistics.js';
import { rowSums } from '../kernels/rowScores.js';
import type { EstimatorDefinition } from './types.js';

/**
 * Mirrors veRL `compute_gpg_outcome_advantage` (f_norm = 1): alpha (r - mean_g) with
 * alpha = rows / max(1, rows with a nonzero score) over the whole batch; a group of one has mean 0.
 */
export const gpg: EstimatorDefinition = {
  name: 'gpg',
  defaultGroupKey: 'prompt',
  requires: [],
  compute(batch) {
    const scores = rowSums(batch.tokenRewards, batch.rows, batch.cols);
    const { codes, count } = batch.groups;
    let nonzero = 0;
    for (let r = 0; r < batch.rows; r++) if (scores[r] !== 0) nonzero++;
    const alpha = batch.rows / Math.max(1, nonzero);
    const stats = groupStatistics(scores, codes, count);
    const rowAdvantages = new Float64Array(batch.rows);
    for (let r = 0; r < batch.rows; r++) rowAdvantages[r] = alpha * (scores[r]! - stats.mean[codes[r]!]!);
    const advantages = broadcastRows(rowAdvantages, batch.responseMask, batch.rows, batch.cols);
    return { advantages, returns: advantages };
  },
};
