import type { EstimatorView } from '../estimators/types.js';

/**
 * Each view row's score r_i: the sum of its token rewards over all positions (the mask is not applied, as in veRL's
 * `token_level_rewards.sum(-1)`), in view order.
 */
export function rowScores(view: EstimatorView): Float64Array {
  return rowTotals(view, view.columns.tokenRewards);
}

/** Each view row's response length: the sum of its mask. */
export function maskLengths(view: EstimatorView): Float64Array {
  return rowTotals(view, view.columns.responseMask);
}

function rowTotals(view: EstimatorView, column: ArrayLike<number>): Float64Array {
  const R = view.columns.responseLength;
  const out = new Float64Array(view.rows.length);
  view.rows.forEach((row, i) => {
    let s = 0;
    const base = row * R;
    for (let t = 0; t < R; t++) s += column[base + t]!;
    out[i] = s;
  });
  return out;
}
