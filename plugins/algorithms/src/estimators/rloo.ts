import { broadcastRows } from '../kernels/broadcast.js';
import { groupStatistics } from '../kernels/groupStatistics.js';
import { rowSums } from '../kernels/rowScores.js';
import type { EstimatorDefinition } from './types.js';

/** Mirrors veRL `compute_rloo_outcome_advantage`: n/(n-1) (r - mean_g), i.e. r minus the mean of the others; a group of one keeps r. */
export const rloo: EstimatorDefinition = {
  name: 'rloo',
  defaultGroupKey: 'prompt',
  requires: [],
  compute(batch) {
    const scores = rowSums(batch.tokenRewards, batch.rows, batch.cols);
    const { codes, count } = batch.groups;
    const stats = groupStatistics(scores, codes, count);
    const rowAdvantages = new Float64Array(batch.rows);
    for (let r = 0; r < batch.rows; r++) {
      const g = codes[r]!;
      const n = stats.size[g]!;
      const score = scores[r]!;
      rowAdvantages[r] = n > 1 ? (score * n) / (n - 1) - (stats.mean[g]! * n) / (n - 1) : score;
    }
    const advantages = broadcastRows(rowAdvantages, batch.responseMask, batch.rows, batch.cols);
    return { advantages, returns: advantages };
  },
};
