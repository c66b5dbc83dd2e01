import type { LossFunction, LossInput, LossOutput, TensorOps } from '@drmas/core';

/**
 * Supervised fine-tuning loss: the negative log-likelihood of the trained tokens, each weighted by its entry in
 * `advantages` (behaviour cloning is the policy gradient with a fixed advantage per token), divided by the
 * mini-batch's token count so micro-batches add up. `drmas sft` sets a weight of 1 on every response token, and
 * with a prompt loss scales the weights so they sum to the token count: the loss is then a weighted mean.
 */
export class NllLossFunction implements LossFunction {
  compute<T>(ops: TensorOps<T>, input: LossInput<T>): LossOutput<T> {
    const weighted = ops.mul(ops.mul(input.logProbs, input.advantages), input.responseMask);
    const loss = ops.div(ops.neg(ops.sum(weighted)), ops.maximum(input.totals.tokens, 1));
    return { loss, metrics: { nll: ops.stopGradient(loss) } };
  }
}
