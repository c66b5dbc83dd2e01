import { AlgorithmInputError } from '../../src/errors.js';
import { maskedMean } from '../../src/kernels/maskedStatistics.js';
import { flattenMatrix, type Matrix } from '../../src/matrix.js';
import type { LossAggregation } from '../../src/losses/aggregation.js';
import { aggregateFlat, checkAggregation } from './aggregateLoss.js';

export interface ValueLossInput {
  /** Current value predictions. */
  values: Matrix;
  /** Values at rollout time. */
  oldValues: Matrix;
  returns: Matrix;
  responseMask: Matrix;
}

/**
 * Clipped value loss, mirroring veRL `compute_value_loss`: 0.5 * aggregate of
 * max((v - R)^2, (clip(v, old - c, old + c) - R)^2); clipFraction = masked mean of (clipped > unclipped).
 */
export function valueLoss(
  input: ValueLossInput,
  options: { clipRange: number; aggregation: LossAggregation },
): { loss: number; clipFraction: number } {
  const c = options?.clipRange;
  if (typeof c !== 'number' || !Number.isFinite(c) || c < 0) {
    throw new AlgorithmInputError('options.clipRange', `must be a finite number >= 0, got ${String(c)}`);
  }
  const aggregation = checkAggregation(options.aggregation, 'options.aggregation');
  const v = flattenMatrix(input.values, 'values');
  const { rows, cols } = v;
  const old = flattenMatrix(input.oldValues, 'oldValues', rows, cols).data;
  const ret = flattenMatrix(input.returns, 'returns', rows, cols).data;
  const mask = flattenMatrix(input.responseMask, 'responseMask', rows, cols).data;
  const losses = new Float64Array(v.data.length);
  const clipped = new Float64Array(v.data.length);
  for (let i = 0; i < losses.length; i++) {
    const pred = v.data[i]!;
    const before = old[i]!;
    const target = ret[i]!;
    const clippedPred = Math.max(Math.min(pred, before + c), before - c);
    const l1 = (pred - target) ** 2;
    const l2 = (clippedPred - target) ** 2;
    losses[i] = Math.max(l1, l2);
    clipped[i] = l2 > l1 ? 1 : 0;
  }
  const loss = 0.5 * aggregateFlat({ loss: losses, mask, rows, cols }, aggregation);
  return { loss, clipFraction: maskedMean(clipped, mask) };
}
