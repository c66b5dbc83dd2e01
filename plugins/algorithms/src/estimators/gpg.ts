import { writeRowAdvantages } from '../kernels/broadcast.js';
import { groupStatistics } from '../kernels/groupStatistics.js';
import { rowScores } from '../kernels/rowScores.js';
import type { EstimatorDefinition } from './types.js';

/**
 * Mirrors veRL `compute_gpg_outcome_advantage` (f_norm = 1): alpha (r - mean_g) with
 * alpha = rows / max(1, rows with a nonzero score) over the whole batch; a group of one has mean 0.
 */
export const gpg: EstimatorDefinition = {
  name: 'gpg',
  defaultGroupKey: 'prompt',
  requires: [],
  compute(view) {
    const scores = rowScores(view);
    const { codes, count } = view.groups;
    let nonzero = 0;
    for (const score of scores) if (score !== 0) nonzero++;
    const alpha = scores.length / Math.max(1, nonzero);
    const stats = groupStatistics(scores, codes, count);
    writeRowAdvantages(
      view,
      scores.map((score, r) => alpha * (score - stats.mean[codes[r]!]!)),
    );
  },
};
