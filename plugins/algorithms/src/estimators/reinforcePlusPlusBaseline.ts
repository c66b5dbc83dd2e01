import { broadcastRows } from '../kernels/broadcast.js';
import { groupStatistics } from '../kernels/groupStatistics.js';
import { maskedWhiten } from '../kernels/maskedStatistics.js';
import { rowSums } from '../kernels/rowScores.js';
import type { EstimatorDefinition } from './types.js';

/**
 * Mirrors veRL `compute_reinforce_plus_plus_baseline_outcome_advantage`: r - mean_g (a group of one has mean 0)
 * broadcast over the mask, then batch masked whitening, times the mask.
 */
export const reinforcePlusPlusBaseline: EstimatorDefinition = {
  name: 'reinforce_plus_plus_baseline',
  defaultGroupKey: 'prompt',
  requires: [],
  compute(batch) {
    const scores = rowSums(batch.tokenRewards, batch.rows, batch.cols);
    const { codes, count } = batch.groups;
    const stats = groupStatistics(scores, codes, count);
    const centered = new Float64Array(batch.rows);
    for (let r = 0; r < batch.rows; r++) centered[r] = scores[r]! - stats.mean[codes[r]!]!;
    const tiled = broadcastRows(centered, batch.responseMask, batch.rows, batch.cols);
    const advantages = maskedWhiten(tiled, batch.responseMask, 'responseMask');
    for (let i = 0; i < advantages.length; i++) advantages[i]! *= batch.responseMask[i]!;
    return { advantages, returns: advantages };
  },
};
