import { lossColumn, type LossColumn, type LossFunction, type LossInput, type LossOutput, type TensorOps } from '@drmas/core';

/**
 * Supervised fine-tuning loss: the negative log-likelihood of the trained tokens, each weighted by its entry in the
 * batch's `lossWeights` column, divided by the mini-batch's token count so micro-batches add up. `drmas sft` sets a
 * weight of 1 on every response token, and with a prompt loss scales the weights so they sum to the token count: the
 * loss is then a weighted mean.
 */
export class NllLossFunction implements LossFunction {
  readonly columns: readonly LossColumn[] = ['lossWeights'];

  compute<T>(ops: TensorOps<T>, input: LossInput<T>): LossOutput<T> {
    const weighted = ops.mul(ops.mul(input.logProbs, lossColumn(input, 'lossWeights')), input.responseMask);
    const loss = ops.div(ops.neg(ops.sum(weighted)), ops.maximum(input.totals.tokens, 1));
    return { loss, metrics: { nll: ops.stopGradient(loss) } };
  }
}
