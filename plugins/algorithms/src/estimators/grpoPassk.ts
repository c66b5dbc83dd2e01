import { AlgorithmInputError } from '../errors.js';
import { writeRowAdvantages } from '../kernels/broadcast.js';
import { groupStatistics } from '../kernels/groupStatistics.js';
import { rowScores } from '../kernels/rowScores.js';
import type { EstimatorDefinition } from './types.js';

/**
 * Mirrors veRL `compute_grpo_passk_outcome_advantage` (https://arxiv.org/abs/2503.19595): only each group's best
 * row gets r_max - r_second (divided by std + eps when normalizing); the others get 0.
 */
export const grpoPassk: EstimatorDefinition = {
  name: 'grpo_passk',
  defaultGroupKey: 'prompt',
  requires: [],
  compute(view, options) {
    const scores = rowScores(view);
    const { codes, count } = view.groups;
    const stats = groupStatistics(scores, codes, count);
    const best = new Int32Array(count).fill(-1);
    const top = new Float64Array(count).fill(-Infinity);
    const second = new Float64Array(count).fill(-Infinity);
    for (let r = 0; r < scores.length; r++) {
      const g = codes[r]!;
      const s = scores[r]!;
      const currentTop = top[g]!;
      if (best[g]! < 0 || s > currentTop) {
        second[g] = currentTop;
        top[g] = s;
        best[g] = r;
      } else if (s > second[g]!) {
        second[g] = s;
      }
    }
    const rowAdvantages = new Float64Array(scores.length);
    for (let g = 0; g < count; g++) {
      const size = stats.size[g]!;
      if (size === 0) continue;
      if (size < 2) {
        throw new AlgorithmInputError(
          'groupIds',
          `grpo_passk needs at least 2 rows per group; group ${g} (first at row ${best[g]}) has ${size}`,
        );
      }
      const gap = top[g]! - second[g]!;
      // The group has rows, so the first pass set best[g] to one of them.
      rowAdvantages[best[g]!] = options.normalizeByStd ? gap / (stats.std[g]! + options.epsilon) : gap;
    }
    writeRowAdvantages(view, rowAdvantages);
  },
};
