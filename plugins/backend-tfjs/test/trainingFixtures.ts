import {
  longestResponse,
  lossTotals,
  TrainingBatch,
  type BatchView,
  type LossFunction,
  type LossInput,
  type OptimizerSettings,
  type TensorOps,
  type UpdateRequest,
  type WorkerGroupBatch,
} from '@drmas/core';

/** Token-mean cross-entropy of the response tokens (advantage-weighted): `-sum(A * logp * mask) / tokens`. */
export const weightedCrossEntropy: LossFunction = {
  compute<T>(ops: TensorOps<T>, input: LossInput<T>) {
    const weighted = ops.mul(ops.mul(input.logProbs, input.advantages), input.responseMask);
    const loss = ops.div(ops.neg(ops.sum(weighted)), input.totals.tokens);
    const tokenLogProb = ops.div(ops.sum(ops.mul(input.logProbs, input.responseMask)), input.totals.tokens);
    return { loss, metrics: { 'actor/mean_logprob': tokenLogProb } };
  },
};

/** A worker group's view of `rows` (prompt, response) pairs with unit advantages (or the given ones per row). */
export function makeBatch(pairs: [number[], number[]][], advantages?: readonly number[]): WorkerGroupBatch {
  const batch = TrainingBatch.fromSequences(
    pairs.map(([p]) => p),
    pairs.map(([, r]) => r),
    { workerGroup: 'test' },
  );
  const R = batch.responseLength;
  pairs.forEach(([, response], r) =>
    response.forEach((_, j) => {
      batch.advantages[r * R + j] = advantages?.[r] ?? 1;
    }),
  );
  return batch.workerGroups()[0]!;
}

/** AdamW settings as torch's defaults, lr aside. */
export const OPTIMIZER: OptimizerSettings = {
  lr: 1e-6,
  betas: [0.9, 0.999],
  eps: 1e-8,
  weightDecay: 0.01,
  maxGradNorm: 1,
  paramGroups: [],
};

/** An update of `view`'s rows; the loss normalizes by `normalizeBy`'s totals (default: the view's own). */
export function updateRequest(
  view: BatchView,
  loss: LossFunction,
  microBatchSize: number,
  options: { optimizer?: Partial<OptimizerSettings>; lrScale?: number; entropyMetric?: boolean; normalizeBy?: BatchView } = {},
): UpdateRequest {
  const whole = options.normalizeBy ?? view;
  return {
    batch: view,
    totals: lossTotals(whole, { responseLength: longestResponse(whole), microBatchSize }),
    loss,
    microBatchSize,
    optimizer: { ...OPTIMIZER, ...options.optimizer },
    lrScale: options.lrScale ?? 1,
    entropyMetric: options.entropyMetric,
  };
}
