import { anchorStepGroups } from '../grouping/anchorClusters.js';
import { groupStatistics, normalizeInGroups } from '../kernels/groupStatistics.js';
import { rowScores } from '../kernels/rowScores.js';
import type { EstimatorDefinition } from './types.js';

/**
 * GiGPO (https://arxiv.org/abs/2505.10978), mirroring verl-agent `compute_gigpo_outcome_advantage`:
 * episode part = every row a sample of its group (`mean_norm`: r - mean; `mean_std_norm`: / (std + eps);
 * a group of one has mean 0, std 1); step part = `stepRewards` normalized within step groups (same group and
 * anchor observation), where a step group of one gives 0; A = (A_episode + w A_step) * mask.
 */
export const gigpo: EstimatorDefinition = {
  name: 'gigpo',
  defaultGroupKey: 'prompt',
  requires: ['stepRewards', 'anchorObservations'],
  compute(view, options) {
    const { responseLength: cols, responseMask, advantages, returns } = view.columns;
    const byStd = options.gigpoMode === 'mean_std_norm';
    const scores = rowScores(view);
    const groups = view.groups;
    const episode = normalizeInGroups(scores, groups.codes, groupStatistics(scores, groups.codes, groups.count), byStd, options.epsilon);
    const rewards = view.columns.rewards;
    const stepRewards = Float64Array.from(view.rows, (row) => rewards[row]!);
    const observations = view.columns.observations as readonly string[];
    const steps = anchorStepGroups(
      Array.from(view.rows, (row) => observations[row]!),
      groups,
      options.similarityThreshold,
    );
    const stepStats = groupStatistics(stepRewards, steps.codes, steps.count, 'self');
    const step = normalizeInGroups(stepRewards, steps.codes, stepStats, byStd, options.epsilon);
    const w = options.stepAdvantageWeight;
    view.rows.forEach((row, i) => {
      const base = row * cols;
      const e = episode[i]!;
      const s = step[i]!;
      for (let t = 0; t < cols; t++) {
        const m = responseMask[base + t]!;
        advantages[base + t] = returns[base + t] = e * m + w * (s * m);
      }
    });
  },
};
