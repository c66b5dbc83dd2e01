import {
  DrmasError,
  hostGradients,
  hostTensor,
  hostTensorOps,
  lossTotalsInput,
  type LossColumn,
  type LossFunction,
  type LossTotals,
} from '@drmas/core';

/** The per-token inputs of one micro-batch, each `[rows * columns]` row-major; `lossColumns` those the loss declares. */
export interface TokenColumns {
  rows: number;
  columns: number;
  logProbs: Float32Array;
  oldLogProbs: Float32Array;
  lossColumns: Partial<Record<LossColumn, Float32Array>>;
  responseMask: Float32Array;
  refLogProbs?: Float32Array;
}

export interface LogProbGradient {
  /** The micro-batch's loss (scaled as the loss scales it: micro-batch losses add up to the mini-batch's). */
  loss: number;
  metrics: Record<string, number>;
  /** dLoss/dlogProbs per token, `[rows * columns]`. */
  gradient: Float32Array;
}

/**
 * drmas's policy loss and its gradient with respect to the per-token log-probs, computed on the client in float64
 * (core's `hostTensorOps`, reverse accumulation over the same loss code every engine trains with): no engine is
 * needed, since the loss is a function of the log-probs only (old and reference log-probs, advantages and the mask
 * are constants). By the chain rule `dLoss/dθ = Σ_t dLoss/dlogp_t · dlogp_t/dθ`, so a server that backpropagates
 * `Σ_t w_t · (-logp_t)` with `w_t = -dLoss/dlogp_t` (Tinker's `cross_entropy` with per-token `weights`) applies
 * exactly drmas's gradient. A loss that needs the policy's entropy cannot be computed from log-probs of the sampled
 * tokens alone.
 */
export async function logProbGradient(loss: LossFunction, input: TokenColumns, totals: LossTotals): Promise<LogProbGradient> {
  if (loss.needsEntropy) {
    throw new DrmasError('CONFIG_INVALID', 'the policy loss has an entropy term, which the tinker backend cannot compute', {
      key: 'algorithm.loss.entropyCoef',
      hint: 'Tinker returns log-probs of the given tokens only, not the full distributions an entropy needs; set the entropy coefficient to 0',
    });
  }
  const shape = [input.rows, input.columns];
  const constant = (values: Float32Array) => hostTensor(values, shape);
  const logProbs = hostTensor(input.logProbs, shape);
  const output = loss.compute(hostTensorOps, {
    logProbs,
    oldLogProbs: constant(input.oldLogProbs),
    ...Object.fromEntries(Object.entries(input.lossColumns).map(([name, values]) => [name, constant(values)])),
    responseMask: constant(input.responseMask),
    refLogProbs: input.refLogProbs ? constant(input.refLogProbs) : undefined,
    totals: lossTotalsInput(hostTensorOps, totals),
  });
  const [gradient] = hostGradients(output.loss, [logProbs]);
  return {
    loss: output.loss.data[0]!,
    metrics: Object.fromEntries(Object.entries(output.metrics).map(([name, t]) => [name, t.data[0]!])),
    gradient: Float32Array.from(gradient!),
  };
}
