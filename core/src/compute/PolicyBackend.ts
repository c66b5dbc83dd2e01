import type { BatchView } from '../data/BatchView.js';
import type { LossFunction, LossTotals } from './TensorOps.js';
import type { TextCodec } from './TextCodec.js';

export interface SamplingParams {
  /** 0 means greedy. */
  temperature?: number;
  topP?: number;
  /** 0 or undefined disables top-k. */
  topK?: number;
  maxNewTokens: number;
  stopTokenIds?: number[];
  /** Generation of a row stops once its decoded text contains one of these; the stop string is kept. */
  stopStrings?: string[];
  seed?: number;
}

/** One of a step's most likely tokens, with its log-prob at the sampling temperature. */
export interface TopLogProb {
  tokenId: number;
  logProb: number;
}

export interface GenerateRequest extends SamplingParams {
  /** Prompt token ids per row (unpadded). */
  prompts: number[][];
  /**
   * Each row's key into the seeded random streams (default: its position in `prompts`). A caller that splits one
   * logical batch across calls or processes passes each row's index in the whole batch, so a row samples the same
   * tokens whichever rows share its call.
   */
  rowKeys?: readonly number[];
  /**
   * Each row's own seed in place of `seed` (its stream is then the one `seed: rowSeeds[r]` gives that row's key), so
   * rows of requests with different seeds share one call: a one-row request `{ seed: s }` samples as the row with
   * seed `s` and key 0 does in any call.
   */
  rowSeeds?: readonly number[];
  /**
   * Called with each new token of every row as it is sampled (for streaming), with its sampling log-prob (as in
   * `GenerateResult.logProbs`) and, when `topLogProbs` asks for them, the step's most likely tokens at the same temperature.
   */
  onToken?: (row: number, tokenId: number, logProb: number, top?: readonly TopLogProb[]) => void;
  /** How many of each step's most likely tokens `onToken` gets (OpenAI's `top_logprobs`); 0 or absent: none. */
  topLogProbs?: number;
}

export interface GenerateResult {
  tokenIds: number[][];
  /** Log-prob of each sampled token under the policy at the sampling temperature (temperature 1 when greedy). */
  logProbs: number[][];
  finishReasons: Array<'stop' | 'length'>;
}

/** Teacher-forced scoring of some rows of a batch: their prompts and responses, each at its row's temperature. */
export interface ScoreRequest {
  batch: BatchView;
  withEntropy?: boolean;
}

/** Per view row, `[rows * batch.responseLength]` row-major in the view's order; 0 beyond each response. */
export interface ScoreResult {
  /** Log-prob of each response token under the policy, its logits divided by the row's temperature (veRL's `logits / T`). */
  logProbs: Float32Array;
  entropy?: Float32Array;
}

/**
 * Optimizer settings for the parameters whose names match one of `params` (torch's param groups); the first group
 * that matches a parameter wins, the others keep the model's settings. The schedule scales a group's `lr` as it
 * scales the model's.
 */
export interface ParamGroupSettings {
  /** Parameter names as in the checkpoint; `*` matches any run of characters (`model.norm.weight`, `*layernorm*`). */
  params: string[];
  lr?: number;
  weightDecay?: number;
  betas?: [number, number];
  eps?: number;
}

/** AdamW settings of one trained model (its worker group), read once from `models.<id>.optimizer`. */
export interface OptimizerSettings {
  lr: number;
  betas: [number, number];
  eps: number;
  weightDecay: number;
  /** Clip the gradient to this global norm (0: no clipping). */
  maxGradNorm: number;
  paramGroups: readonly ParamGroupSettings[];
  /** How AdamW holds its moments; unset: float32. */
  moments?: MomentPrecision;
}

/**
 * AdamW's moments in float32, or in 8 bits as bitsandbytes' `AdamW8bit` holds them (blocks of 256 values, one byte a
 * value and a float32 scale a block; tensors under 4,096 values stay float32): 2 bytes a parameter instead of 8.
 */
export type MomentPrecision = 'float32' | '8bit';

/** Where an update's PPO ratio takes its old log-probs from (`UpdateRequest.oldLogProbs`). */
export type RatioDenominator = 'batch' | 'current';

/** One optimizer step over some rows of a batch: forward, loss, backward (micro-batches accumulate), clip, AdamW. */
export interface UpdateRequest {
  /** The rows to compute: a mini-batch, less rows an inert loss learns nothing from. */
  batch: BatchView;
  /** Totals of the whole mini-batch (rows left out included), which the loss normalizes by. */
  totals: LossTotals;
  loss: LossFunction;
  /** Rows per micro-batch (gradient accumulation across micro-batches). */
  microBatchSize: number;
  /**
   * At most this many padded tokens per micro-batch besides `microBatchSize` (`partMicroBatches`' `MicroBatchTokens`:
   * veRL's dynamic batch size); unset, micro-batches are cut by rows alone.
   */
  microBatchTokens?: number;
  optimizer: OptimizerSettings;
  /** The learning-rate schedule's factor at this step, applied to `optimizer.lr` and every param group's lr. */
  lrScale: number;
  /**
   * The PPO ratio's old log-probs: `batch` (the default) reads `batch.oldLogProbs`, else the rollout's sampling
   * log-probs; `current` takes the update's own forward pass, detached, so the ratio is exactly 1 and its gradient the
   * policy gradient (TRL's and veRL's on-policy path, right when the batch takes one optimizer step).
   */
  oldLogProbs?: RatioDenominator;
  /**
   * Also report `actor/entropy`, the policy's token-mean entropy over the computed rows' response tokens, from the
   * update's own forward pass (for callers that skip scoring the batch before updating).
   */
  entropyMetric?: boolean;
  /**
   * Called with the step's pre-clip gradient norm (when finite) before anything is applied; false skips the step as a
   * non-finite norm does: weights, optimizer moments and step count untouched, `skipped` true (the trainer's spike guard).
   */
  acceptGradNorm?: (gradNorm: number) => boolean;
  /**
   * Each batch row's agent (an index below `agentCount`): the engine then also reports each agent's part of the
   * gradient (the gradient of the loss terms of its rows) as `UpdateResult.agentGradNorms`. Its micro-batches hold
   * one agent's rows each, which changes the floating-point order of the sum but not the loss (it normalizes by `totals`).
   */
  rowAgents?: { readonly codes: Int32Array; readonly agentCount: number };
  /** Compute the loss and the gradient norms only: weights, optimizer moments and step count untouched (`skipped` true). */
  measureOnly?: boolean;
}

export interface UpdateResult {
  loss: number;
  gradNorm: number;
  /** True when the step was skipped (non-finite gradient norm); weights and optimizer state are unchanged. */
  skipped: boolean;
  learningRate: number;
  /** The loss's own metrics (`pg_loss`, `pg_clipfrac`, ...) and the backend's (`actor/skipped_nonfinite`), summed over micro-batches. */
  metrics: Record<string, number>;
  /**
   * With `rowAgents`: the pre-clip norm of each agent's part of the gradient (0 for an agent with no computed row);
   * the parts add up to the gradient whose norm is `gradNorm`.
   */
  agentGradNorms?: number[];
}

/** What `PolicyBackend.snapshotTraining` returns: opaque to everyone but the engine that made it. */
export interface TrainingSnapshot {
  /** The engine's name, so a snapshot handed to another engine is refused. */
  readonly engine: string;
}

/** One weight tensor by its Hugging Face name (`model.layers.0.self_attn.q_proj.weight`). */
export interface WeightTensor {
  shape: number[];
  data: Float32Array;
}

/** A policy model as one engine sees it: sampling, scoring, training and checkpoints. */
export interface PolicyBackend {
  readonly name: string;
  /** Human-readable runtime the backend picked (`tfjs-node-gpu`, `wasm`, `onnxruntime cpu`, ...). */
  readonly runtime: string;
  /** Size of the model's vocabulary (valid token ids are below it). */
  readonly vocabSize: number;
  /** Positions of the model (`max_position_embeddings`): a prompt and its response together; undefined when unbounded. */
  readonly maxPositions?: number;
  /** The model's tokenizer, when its checkpoint has one. */
  readonly tokenizer?: TextCodec | undefined;
  /**
   * Whether `update` honours `rowAgents` (reports `agentGradNorms`) and `measureOnly` (applies nothing, optimizer
   * moments included): what `trainer.agentDiagnostics` needs, and is refused without.
   */
  readonly measuresAgentGradients?: boolean;
  generate(request: GenerateRequest): Promise<GenerateResult>;
  score(request: ScoreRequest): Promise<ScoreResult>;
  update(request: UpdateRequest): Promise<UpdateResult>;
  /** Names of the trained parameters, as in the checkpoint (param groups are matched against them). */
  parameterNames(): string[];
  /** Writes a Hugging Face checkpoint (config.json, model.safetensors, tokenizer files) plus optimizer state. */
  save(dir: string, options?: { optimizer?: boolean; dtype?: 'float32' | 'bfloat16' }): Promise<void>;
  load(dir: string, options?: { optimizer?: boolean }): Promise<void>;
  /** The current weights by Hugging Face tensor name (a copy; safe to keep). */
  exportWeights(): Promise<Map<string, WeightTensor>>;
  /** Copies the trainer's current weights into this engine (no-op when the engine is the trainer). */
  syncWeights(from: PolicyBackend): Promise<void>;
  /**
   * An in-memory copy of everything an update changes (weights, optimizer moments and step count), for
   * `restoreTraining`; engines that cannot copy it leave both out (the spike guard's `rollback` then refuses them).
   */
  snapshotTraining?(): Promise<TrainingSnapshot>;
  /** Puts back what `snapshotTraining` copied, as if no update had run since. */
  restoreTraining?(snapshot: TrainingSnapshot): Promise<void>;
  dispose(): void;
}
