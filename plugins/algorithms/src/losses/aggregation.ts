import type { LossTotalsInput, TensorOps } from '@drmas/core';

/** veRL's `loss_agg_mode`s: how per-token losses become one number. */
export const LOSS_AGGREGATIONS = Object.freeze([
  'token-mean',
  'seq-mean-token-sum',
  'seq-mean-token-mean',
  'seq-mean-token-sum-norm',
] as const);
export type LossAggregation = (typeof LOSS_AGGREGATIONS)[number];

/**
 * veRL's `agg_loss` split across micro-batches: each micro-batch is normalized by the mini-batch totals, so the
 * micro-batch values add up to the value veRL's `agg_loss` gives on the whole mini-batch (the float64 reference
 * `test/reference/aggregateLoss.ts` checks it).
 */
export function aggregate<T>(ops: TensorOps<T>, values: T, mask: T, mode: LossAggregation, totals: LossTotalsInput<T>, scale?: number): T {
  const masked = ops.mul(values, mask);
  switch (mode) {
    case 'token-mean':
      return ops.div(ops.sum(masked), ops.maximum(totals.tokens, 1));
    case 'seq-mean-token-sum':
      return ops.div(ops.sum(masked), ops.maximum(totals.rows, 1));
    case 'seq-mean-token-mean':
      return ops.div(ops.sum(ops.div(ops.sum(masked, 1), ops.add(ops.sum(mask, 1), 1e-8))), ops.maximum(totals.rows, 1));
    case 'seq-mean-token-sum-norm':
      return ops.div(ops.sum(masked), scale ?? totals.responseLength);
  }
}
