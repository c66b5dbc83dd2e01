import { createToken } from '../di/Token.js';

/**
 * The tensor operations a loss function may use. Backends implement them over their own tensor type so that one
 * loss formula, written once in the algorithms plugin, is differentiated by each backend's autodiff.
 * Binary operations broadcast like numpy; a number operand is a scalar.
 */
export interface TensorOps<T> {
  add(a: T, b: T | number): T;
  sub(a: T, b: T | number): T;
  mul(a: T, b: T | number): T;
  div(a: T, b: T | number): T;
  neg(a: T): T;
  exp(a: T): T;
  log(a: T): T;
  abs(a: T): T;
  square(a: T): T;
  minimum(a: T, b: T | number): T;
  maximum(a: T, b: T | number): T;
  clip(a: T, min: number, max: number): T;
  /** Elementwise `a > b` as 1/0 in the float dtype; not differentiable. */
  greater(a: T, b: T | number): T;
  /** Elementwise `a < b` as 1/0 in the float dtype; not differentiable. */
  less(a: T, b: T | number): T;
  /** Sum over `axis` (all axes when omitted, giving a scalar). */
  sum(a: T, axis?: number): T;
  /** The same elements, row-major, in `shape`; one entry may be -1 (the size the others leave). */
  reshape(a: T, shape: readonly number[]): T;
  /** Treats `a` as a constant for differentiation. */
  stopGradient(a: T): T;
  scalar(value: number): T;
}

/** Totals over a whole mini-batch, so that the losses of its micro-batches add up to the mini-batch's loss. */
export interface LossTotals {
  /** Trained tokens (the sum of the response mask). */
  tokens: number;
  /** Rows with at least one trained token. */
  rows: number;
  /** The seq-mean-token-sum-norm divisor: the worker group's longest response. */
  responseLength: number;
  microBatches: number;
}

/**
 * The mini-batch totals a loss normalizes by, as scalar tensors: a backend that builds its loss graph once
 * (onnxruntime) feeds them per mini-batch instead of baking them into the graph.
 */
export interface LossTotalsInput<T> {
  tokens: T;
  rows: T;
  responseLength: T;
}

/** `totals` as scalars of `ops` (what a backend gives the loss). */
export function lossTotalsInput<T>(ops: TensorOps<T>, totals: LossTotals): LossTotalsInput<T> {
  return { tokens: ops.scalar(totals.tokens), rows: ops.scalar(totals.rows), responseLength: ops.scalar(totals.responseLength) };
}

/**
 * Per-token batch columns a loss may read beyond log-probs and the mask (`LossFunction.columns` names those it reads;
 * `trainedColumns(...).column(name)` cuts one for a micro-batch):
 * - `advantages`: the estimator's advantages (times `TrainingBatch.advantageFactors` where the batch has them);
 * - `lossWeights`: a weight per token (`TrainingBatch.lossWeights`: `drmas sft`'s demonstration weights);
 * - `preference`: +1 on every token of a preference pair's chosen row, -1 on its rejected one, 0 elsewhere
 *   (`TrainingBatch.pairs`).
 */
export type LossColumn = 'advantages' | 'lossWeights' | 'preference';

/** The per-token inputs of a policy loss for one micro-batch, each `[rows, tokens]`. */
export interface LossInput<T> {
  logProbs: T;
  oldLogProbs: T;
  /** 1 on the rows' response tokens, 0 on padding and on rows kept out of the loss. */
  responseMask: T;
  /** The columns the loss declares in `columns` (the default: `advantages`). */
  advantages?: T;
  lossWeights?: T;
  preference?: T;
  refLogProbs?: T;
  /** Per-token entropy of the current policy, when the loss asks for it. */
  entropy?: T;
  totals: LossTotalsInput<T>;
}

export interface LossOutput<T> {
  /** Scalar loss of this micro-batch, already scaled so the sum over micro-batches is the mini-batch loss. */
  loss: T;
  /** Scalars to report (clip fraction, KL, entropy, ...), each already scaled like `loss`. */
  metrics: Record<string, T>;
}

export interface LossFunction {
  /** The batch columns the loss reads (`LossColumn`); absent: `advantages`. */
  readonly columns?: readonly LossColumn[];
  /** Whether the backend must compute per-token entropy for this loss. */
  readonly needsEntropy?: boolean;
  /** Whether the batch must carry reference log-probs. */
  readonly needsReference?: boolean;
  /**
   * The policy the reference log-probs come from: a frozen copy of the initial weights (`initial`, the default, a
   * model kept beside the trained one) or the policy as it is before each step's update (`current`: no model kept).
   */
  readonly referencePolicy?: 'initial' | 'current';
  /**
   * Whether a row whose advantages are all zero adds nothing to the loss or its gradient (true of a pure
   * policy-gradient loss with no KL or entropy term). Trainers may then skip such rows, keeping the mini-batch
   * totals, so the update is unchanged.
   */
  readonly zeroAdvantageRowsInert?: boolean;
  /**
   * Whether the loss compares rows two by two (preference pairs, adjacent rows): callers keep each pair whole and in
   * order in every mini-batch, and engines refuse a micro-batch size that would split one.
   */
  readonly pairedRows?: boolean;
  compute<T>(ops: TensorOps<T>, input: LossInput<T>): LossOutput<T>;
}

/** The batch columns `loss` reads: its `columns`, else the advantages. */
export function lossColumnsOf(loss: Pick<LossFunction, 'columns'>): readonly LossColumn[] {
  return loss.columns ?? ['advantages'];
}

/** A column a loss declares, or the error naming the loss's column the backend did not feed. */
export function lossColumn<T>(input: LossInput<T>, name: LossColumn): T {
  const value = input[name];
  if (value === undefined) throw new Error(`the loss reads the ${name} column but its input has none: declare it in LossFunction.columns`);
  return value;
}

/** The policy loss the trainers use, bound by the algorithms plugin from `algorithm.*` settings. */
export const LossFunction = createToken<LossFunction>('LossFunction', { label: 'policy loss' });
