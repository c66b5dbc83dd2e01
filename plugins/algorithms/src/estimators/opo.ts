import { writeRowAdvantages } from '../kernels/broadcast.js';
import { maskLengths, rowScores } from '../kernels/rowScores.js';
import type { EstimatorDefinition } from './types.js';

/**
 * Mirrors veRL `compute_opo_outcome_advantage` (https://arxiv.org/pdf/2505.23585): the baseline is the
 * length-weighted mean score of the group, sum(len_i r_i) / sum(len_i), len = mask sum; a group of one has
 * baseline 0. A group whose rows are all empty also gets baseline 0 (veRL would divide 0 by 0).
 */
export const opo: EstimatorDefinition = {
  name: 'opo',
  defaultGroupKey: 'prompt',
  requires: [],
  compute(view) {
    const scores = rowScores(view);
    const lengths = maskLengths(view);
    const { codes, count } = view.groups;
    const size = new Int32Array(count);
    const weighted = new Float64Array(count);
    const total = new Float64Array(count);
    for (let r = 0; r < scores.length; r++) {
      const g = codes[r]!;
      const length = lengths[r]!;
      size[g]!++;
      weighted[g]! += length * scores[r]!;
      total[g]! += length;
    }
    const rowAdvantages = new Float64Array(scores.length);
    for (let r = 0; r < scores.length; r++) {
      const g = codes[r]!;
      const groupTotal = total[g]!;
      const baseline = size[g]! > 1 && groupTotal !== 0 ? weighted[g]! / groupTotal : 0;
      rowAdvantages[r] = scores[r]! - baseline;
    }
    writeRowAdvantages(view, rowAdvantages);
  },
};
