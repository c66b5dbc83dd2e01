import { anchorStepGroups } from '../grouping/anchorClusters.js';
import { groupStatistics, normalizeInGroups } from '../kernels/groupStatistics.js';
import { rowSums } from '../kernels/rowScores.js';
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
  compute(batch, options) {
    const { rows, cols, responseMask } = batch;
    const byStd = options.gigpoMode === 'mean_std_norm';
    const scores = rowSums(batch.tokenRewards, rows, cols);
    const groups = batch.groups;
    const episode = normalizeInGroups(scores, groups.codes, groupStatistics(scores, groups.codes, groups.count), byStd, options.epsilon);
    const stepRewards = batch.stepRewards as ArrayLike<number>;
    const steps = anchorStepGroups(batch.anchorObservations as readonly string[], groups, options.similarityThreshold);
    const stepStats = groupStatistics(stepRewards, steps.codes, steps.count, 'self');
    const step = normalizeInGroups(stepRewards, steps.codes, stepStats, byStd, options.epsilon);
    const w = options.stepAdvantageWeight;
    const advantages = new Float64Array(rows * cols);
    for (let r = 0; r < rows; r++) {
      const base = r * cols;
      const e = episode[r]!;
      const s = step[r]!;
      for (let t = 0; t < cols; t++) {
        const m = responseMask[base + t]!;
        advantages[base + t] = e * m + w * (s * m);
      }
    }
    return { advantages, returns: advantages };
  },
};
