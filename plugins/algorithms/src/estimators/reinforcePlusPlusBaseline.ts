import { maskAdvantages, returnsAreAdvantages, writeRowAdvantages } from '../kernels/broadcast.js';
import { groupStatistics } from '../kernels/groupStatistics.js';
import { maskedWhiten } from '../kernels/maskedStatistics.js';
import { rowScores } from '../kernels/rowScores.js';
import type { EstimatorDefinition } from './types.js';

/**
 * Mirrors veRL `compute_reinforce_plus_plus_baseline_outcome_advantage`: r - mean_g (a group of one has mean 0)
 * broadcast over the mask, then batch masked whitening, times the mask.
 */
export const reinforcePlusPlusBaseline: EstimatorDefinition = {
  name: 'reinforce_plus_plus_baseline',
  defaultGroupKey: 'prompt',
  requires: [],
  compute(view) {
    const scores = rowScores(view);
    const { codes, count } = view.groups;
    const stats = groupStatistics(scores, codes, count);
    writeRowAdvantages(
      view,
      scores.map((score, r) => score - stats.mean[codes[r]!]!),
    );
    const { advantages } = view.columns;
    maskedWhiten(view, advantages, advantages, 'responseMask');
    maskAdvantages(view);
    returnsAreAdvantages(view);
  },
};
