import { AlgorithmInputError } from '../errors.js';
import type { EstimatorView } from '../estimators/types.js';

/** Sum of values * mask, ignoring values where the mask is 0 (veRL `masked_sum`). */
export function maskedSum(values: ArrayLike<number>, mask: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < values.length; i++) {
    const m = mask[i]!;
    if (m !== 0) s += values[i]! * m;
  }
  return s;
}

export function maskTotal(mask: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < mask.length; i++) s += mask[i]!;
  return s;
}

/** veRL `masked_mean`: masked sum / (mask sum + 1e-8). */
export function maskedMean(values: ArrayLike<number>, mask: ArrayLike<number>): number {
  return maskedSum(values, mask) / (maskTotal(mask) + 1e-8);
}

/**
 * veRL `masked_whiten` over the view's tokens: (x - mean) / sqrt(var + 1e-8), with the masked mean and the unbiased
 * masked variance (times n/(n-1), n = mask sum), read from `values` and written to `out` (both laid out as the
 * batch's columns; they may be one array) at every position of the view's rows, masked or not.
 */
export function maskedWhiten(view: EstimatorView, values: ArrayLike<number>, out: Float64Array, key: string): void {
  const { responseLength: R, responseMask: mask } = view.columns;
  let n = 0;
  let sum = 0;
  for (const row of view.rows) {
    for (let i = row * R; i < (row + 1) * R; i++) {
      const m = mask[i]!;
      n += m;
      if (m !== 0) sum += values[i]! * m;
    }
  }
  if (n === 0) throw new AlgorithmInputError(key, 'batch whitening needs at least one unmasked token; the mask is all zero');
  if (n === 1)
    throw new AlgorithmInputError(key, 'batch whitening needs at least two unmasked tokens (the unbiased variance divides by n-1)');
  const mean = sum / (n + 1e-8);
  let sq = 0;
  for (const row of view.rows) {
    for (let i = row * R; i < (row + 1) * R; i++) {
      const m = mask[i]!;
      if (m !== 0) {
        const d = values[i]! - mean;
        sq += d * d * m;
      }
    }
  }
  const variance = (sq / (n + 1e-8)) * (n / (n - 1));
  const scale = 1 / Math.sqrt(variance + 1e-8);
  for (const row of view.rows) for (let i = row * R; i < (row + 1) * R; i++) out[i] = (values[i]! - mean) * scale;
}
