import { AlgorithmInputError } from '../errors.js';

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
 * veRL `masked_whiten` over the whole batch: (x - mean) / sqrt(var + 1e-8), with the masked mean and the
 * unbiased masked variance (times n/(n-1), n = mask sum). Applied to every position, masked or not.
 */
export function maskedWhiten(values: ArrayLike<number>, mask: ArrayLike<number>, key: string): Float64Array {
  const n = maskTotal(mask);
  if (n === 0) throw new AlgorithmInputError(key, 'batch whitening needs at least one unmasked token; the mask is all zero');
  if (n === 1)
    throw new AlgorithmInputError(key, 'batch whitening needs at least two unmasked tokens (the unbiased variance divides by n-1)');
  const mean = maskedSum(values, mask) / (n + 1e-8);
  let sq = 0;
  for (let i = 0; i < values.length; i++) {
    const m = mask[i]!;
    if (m !== 0) {
      const d = values[i]! - mean;
      sq += d * d * m;
    }
  }
  const variance = (sq / (n + 1e-8)) * (n / (n - 1));
  const scale = 1 / Math.sqrt(variance + 1e-8);
  const out = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = (values[i]! - mean) * scale;
  return out;
}
