import type { LossFunction, LossInput, LossOutput, TensorOps } from '@drmas/core';

/**
 * Supervised fine-tuning loss: the mean negative log-likelihood of the response tokens (token-mean over the
 * mini-batch, so micro-batches add up). Used by `drmas sft`.
 */
export class NllLossFunction implements LossFunction {
  compute<T>(ops: TensorOps<T>, input: LossInput<T>): LossOutput<T> {
    const loss = ops.div(ops.neg(ops.sum(ops.mul(input.logProbs, input.responseMask))), Math.max(input.totals.tokens, 1));
    return { loss, metrics: { nll: ops.stopGradient(loss) } };
  }
}
