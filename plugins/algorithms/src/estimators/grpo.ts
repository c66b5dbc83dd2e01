import { writeRowAdvantages } from '../kernels/broadcast.js';
import { groupStatistics, normalizeInGroups } from '../kernels/groupStatistics.js';
import { rowScores } from '../kernels/rowScores.js';
import { combineCodings } from '../grouping/coding.js';
import type { EstimatorDefinition, EstimatorView, ResolvedAdvantageOptions } from './types.js';

/**
 * Per-row group-normalized scores, mirroring veRL `compute_grpo_outcome_advantage`:
 * (r - mean_g) / (std_g + eps), unbiased std, a group of one has mean 0 and std 1.
 *
 * The samples are the rows (`statisticsUnit: turn`), or with `trajectory` and trajectory ids, each trajectory's rows
 * within the group averaged into one sample whose advantage every one of those rows gets (multi-agent GRPO: one
 * baseline per prompt, each rollout one sample). The group key and the unit are independent: `prompt_agent` with
 * `trajectory` averages each agent's rows of a trajectory.
 */
export function groupNormalizedRowAdvantages(view: EstimatorView, options: ResolvedAdvantageOptions): Float64Array {
  const scores = rowScores(view);
  const groupOf = view.groups.codes;
  if (options.statisticsUnit !== 'trajectory' || view.trajectories === undefined) {
    const stats = groupStatistics(scores, groupOf, view.groups.count);
    return normalizeInGroups(scores, groupOf, stats, options.normalizeByStd, options.epsilon);
  }
  // Units are (group, trajectory) pairs, so a unit never spans two groups whatever the key.
  const unit = combineCodings(view.groups, view.trajectories);
  const unitScore = new Float64Array(unit.count);
  const unitRows = new Int32Array(unit.count);
  const unitGroup = new Int32Array(unit.count);
  for (let r = 0; r < scores.length; r++) {
    const u = unit.codes[r]!;
    unitScore[u]! += scores[r]!;
    unitRows[u]!++;
    unitGroup[u] = groupOf[r]!;
  }
  for (let u = 0; u < unit.count; u++) unitScore[u]! /= unitRows[u]!;
  const stats = groupStatistics(unitScore, unitGroup, view.groups.count);
  const unitAdvantage = normalizeInGroups(unitScore, unitGroup, stats, options.normalizeByStd, options.epsilon);
  return Float64Array.from(unit.codes, (u) => unitAdvantage[u]!);
}

/** The GRPO formula broadcast over each row's response tokens; `returns` equal the advantages. */
export function groupNormalized(view: EstimatorView, options: ResolvedAdvantageOptions): void {
  writeRowAdvantages(view, groupNormalizedRowAdvantages(view, options));
}

/** GRPO: one baseline per prompt group, each trajectory one sample (its rows averaged). */
export const grpo: EstimatorDefinition = {
  name: 'grpo',
  defaultGroupKey: 'prompt',
  defaultStatisticsUnit: 'trajectory',
  requires: [],
  compute: groupNormalized,
};
