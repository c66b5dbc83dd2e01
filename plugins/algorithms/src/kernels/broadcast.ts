import type { EstimatorView } from '../estimators/types.js';

/**
 * Writes each view row's value times the mask over its tokens into `advantages` (a per-row advantage broadcast over
 * its response), and the same into `returns`, or `returnValues` broadcast the same way when given.
 */
export function writeRowAdvantages(view: EstimatorView, rowValues: ArrayLike<number>, returnValues: ArrayLike<number> = rowValues): void {
  const { responseLength: R, responseMask, advantages, returns } = view.columns;
  view.rows.forEach((row, i) => {
    const v = rowValues[i]!;
    const g = returnValues[i]!;
    const base = row * R;
    for (let t = 0; t < R; t++) {
      const m = responseMask[base + t]!;
      advantages[base + t] = v * m;
      returns[base + t] = g * m;
    }
  });
}

/** Copies the view rows' advantages into `returns` (estimators whose returns are their advantages). */
export function returnsAreAdvantages(view: EstimatorView): void {
  const { responseLength: R, advantages, returns } = view.columns;
  for (const row of view.rows) returns.set(advantages.subarray(row * R, (row + 1) * R), row * R);
}

/** Multiplies the view rows' advantages by the mask, in place. */
export function maskAdvantages(view: EstimatorView): void {
  const { responseLength: R, responseMask, advantages } = view.columns;
  for (const row of view.rows) for (let i = row * R; i < (row + 1) * R; i++) advantages[i]! *= responseMask[i]!;
}
