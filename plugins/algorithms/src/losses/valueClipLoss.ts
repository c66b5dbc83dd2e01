import type { TensorOps, ValueLossFunction, ValueLossInput } from '@drmas/core';
import { aggregate, type LossAggregation } from './aggregation.js';

export interface ValueLossSettings {
  /** veRL's `cliprange_value`: how far a prediction may move from the value the batch was estimated with. */
  clipRange: number;
  aggregation: LossAggregation;
}

/**
 * veRL's `compute_value_loss` over `TensorOps`: 0.5 * aggregate of max((v - R)^2, (clip(v, old - c, old + c) - R)^2);
 * `vf_clipfrac` is the token mean of (clipped > unclipped), `vpred_mean` the token mean of the predictions. Matches
 * `valueLoss` (float64) on the same inputs.
 */
export class ClippedValueLoss implements ValueLossFunction {
  constructor(readonly settings: ValueLossSettings) {}

  compute<T>(ops: TensorOps<T>, input: ValueLossInput<T>): { loss: T; metrics: Record<string, T> } {
    const { values: v, oldValues: old, returns, responseMask: mask, totals } = input;
    const c = this.settings.clipRange;
    const clipped = ops.maximum(ops.minimum(v, ops.add(old, c)), ops.sub(old, c));
    const unclippedLoss = ops.square(ops.sub(v, returns));
    const clippedLoss = ops.square(ops.sub(clipped, returns));
    const loss = ops.mul(aggregate(ops, ops.maximum(unclippedLoss, clippedLoss), mask, this.settings.aggregation, totals), 0.5);
    const tokenMean = (values: T) => ops.stopGradient(ops.div(ops.sum(ops.mul(values, mask)), ops.maximum(totals.tokens, 1)));
    return {
      loss,
      metrics: {
        vf_loss: ops.stopGradient(loss),
        vf_clipfrac: tokenMean(ops.greater(clippedLoss, unclippedLoss)),
        vpred_mean: tokenMean(v),
      },
    };
  }
}
