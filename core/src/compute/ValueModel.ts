import type { BatchView } from '../data/BatchView.js';
import type { OptimizerSettings, UpdateResult } from './PolicyBackend.js';
import type { LossTotals, LossTotalsInput, TensorOps } from './TensorOps.js';

/** The per-token inputs of a value loss for one micro-batch, each `[rows, tokens]`. */
export interface ValueLossInput<T> {
  /** The critic's current predictions (differentiable). */
  values: T;
  /** The values the batch was estimated with (`TrainingBatch.values`). */
  oldValues: T;
  returns: T;
  responseMask: T;
  totals: LossTotalsInput<T>;
}

/** A critic's loss, written over `TensorOps` so each backend's autodiff differentiates it. */
export interface ValueLossFunction {
  compute<T>(ops: TensorOps<T>, input: ValueLossInput<T>): { loss: T; metrics: Record<string, T> };
}

/**
 * The token sequence a critic reads before each row's response, by batch row (the row's own prompt when absent):
 * a centralized critic reads the episode's joint context instead.
 */
export type CriticContexts = ReadonlyMap<number, Int32Array>;

export interface ValuesRequest {
  batch: BatchView;
  contexts?: CriticContexts;
}

/** One optimizer step of a critic over some rows: forward, value loss, backward (micro-batches accumulate), clip, AdamW. */
export interface ValueUpdateRequest extends ValuesRequest {
  totals: LossTotals;
  loss: ValueLossFunction;
  microBatchSize: number;
  optimizer: OptimizerSettings;
  lrScale: number;
  /**
   * Called with the step's pre-clip gradient norm (when finite) before anything is applied; false skips the step as a
   * non-finite norm does: weights, optimizer moments and step count untouched, `skipped` true (`critic.spikeGuard`).
   */
  acceptGradNorm?: (gradNorm: number) => boolean;
}

/**
 * A value model (critic) as one engine sees it: a decoder trunk and a scalar head. Its value at response token t is
 * the head applied to the hidden state that predicts token t (veRL's `values[:, -response_length - 1 : -1]`: the
 * value of the state before the token).
 */
export interface ValueModel {
  readonly name: string;
  readonly runtime: string;
  /** Per view row, `[rows * batch.responseLength]` in the view's order; 0 beyond each response. */
  values(request: ValuesRequest): Promise<Float32Array>;
  update(request: ValueUpdateRequest): Promise<UpdateResult>;
  /** Names of the trained parameters (the head's, and the trunk's unless it is the policy's). */
  parameterNames(): string[];
  /** Writes the critic into `dir`: the trunk as a Hugging Face folder (unless shared), the head, the optimizer state. */
  save(dir: string): Promise<void>;
  load(dir: string): Promise<void>;
  dispose(): void;
}
