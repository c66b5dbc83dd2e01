import { broadcastRows } from '../kernels/broadcast.js';
import { groupStatistics, normalizeInGroups } from '../kernels/groupStatistics.js';
import { rowSums } from '../kernels/rowScores.js';
import { combineCodings } from '../grouping/coding.js';
import type { EstimatorBatch, EstimatorDefinition, ResolvedAdvantageOptions } from './types.js';

/**
 * Per-row group-normalized scores, mirroring veRL `compute_grpo_outcome_advantage`:
 * (r - mean_g) / (std_g + eps), unbiased std, a group of one has mean 0 and std 1.
 *
 * With `averageTrajectories` and trajectory ids, each trajectory (its rows averaged) is one sample of its
 * group and every row of the trajectory gets the trajectory's advantage (multi-agent GRPO: one baseline per prompt).
 */
export function groupNormalizedRowAdvantages(
  batch: EstimatorBatch,
  options: ResolvedAdvantageOptions,
  averageTrajectories: boolean,
): Float64Array {
  const scores = rowSums(batch.tokenRewards, batch.rows, batch.cols);
  const groupOf = batch.groups.codes;
  if (!averageTrajectories || batch.trajectories === undefined) {
    const stats = groupStatistics(scores, groupOf, batch.groups.count);
    return normalizeInGroups(scores, groupOf, stats, options.normalizeByStd, options.epsilon);
  }
  const traj = combineCodings(batch.groups, batch.trajectories);
  const trajScore = new Float64Array(traj.count);
  const trajRows = new Int32Array(traj.count);
  const trajGroup = new Int32Array(traj.count);
  for (let r = 0; r < batch.rows; r++) {
    const t = traj.codes[r]!;
    trajScore[t]! += scores[r]!;
    trajRows[t]!++;
    trajGroup[t] = groupOf[r]!;
  }
  for (let t = 0; t < traj.count; t++) trajScore[t]! /= trajRows[t]!;
  const stats = groupStatistics(trajScore, trajGroup, batch.groups.count);
  const trajAdvantage = normalizeInGroups(trajScore, trajGroup, stats, options.normalizeByStd, options.epsilon);
  const out = new Float64Array(batch.rows);
  for (let r = 0; r < batch.rows; r++) out[r] = trajAdvantage[traj.codes[r]!]!;
  return out;
}

export const grpo: EstimatorDefinition = {
  name: 'grpo',
  defaultGroupKey: 'prompt',
  requires: [],
  compute(batch, options) {
    const rowAdvantages = groupNormalizedRowAdvantages(batch, options, true);
    const advantages = broadcastRows(rowAdvantages, batch.responseMask, batch.rows, batch.cols);
    return { advantages, returns: advantages };
  },
};
