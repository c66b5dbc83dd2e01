import { writeRowAdvantages } from '../kernels/broadcast.js';
import { groupStatistics } from '../kernels/groupStatistics.js';
import { rowScores } from '../kernels/rowScores.js';
import type { EstimatorDefinition } from './types.js';

/** Mirrors veRL `compute_rloo_outcome_advantage`: n/(n-1) (r - mean_g), i.e. r minus the mean of the others; a group of one keeps r. */
export const rloo: EstimatorDefinition = {
  name: 'rloo',
  defaultGroupKey: 'prompt',
  requires: [],
  compute(view) {
    const scores = rowScores(view);
    const { codes, count } = view.groups;
    const stats = groupStatistics(scores, codes, count);
    const rowAdvantages = new Float64Array(scores.length);
    for (let r = 0; r < scores.length; r++) {
      const g = codes[r]!;
      const n = stats.size[g]!;
      const score = scores[r]!;
      rowAdvantages[r] = n > 1 ? (score * n) / (n - 1) - (stats.mean[g]! * n) / (n - 1) : score;
    }
    writeRowAdvantages(view, rowAdvantages);
  },
};
