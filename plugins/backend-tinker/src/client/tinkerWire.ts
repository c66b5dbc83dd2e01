/**
 * The JSON bodies of the Tinker API, as the Python SDK sends and reads them (thinking-machines-lab/tinker,
 * src/tinker/types/*.py at its first published commit 829c151, and SkyRL's server, skyrl-tx/tx/tinker/api.py). Only
 * the fields drmas uses are typed.
 */

/** `TensorData`: a flat array with its dtype and shape. */
export interface TensorData {
  data: number[];
  dtype: 'int64' | 'float32';
  shape?: number[];
}

/** `EncodedTextChunk`: token ids (the only `ModelInput` chunk drmas sends). */
export interface EncodedTextChunk {
  type: 'encoded_text';
  tokens: number[];
}

export interface ModelInput {
  chunks: EncodedTextChunk[];
}

/** One sequence of a forward or forward_backward: the input tokens, and per position the target and its weight. */
export interface Datum {
  model_input: ModelInput;
  loss_fn_inputs: { target_tokens: TensorData; weights: TensorData } & Record<string, TensorData>;
}

export interface ForwardBackwardInput {
  data: Datum[];
  loss_fn: 'cross_entropy';
}

/** `ForwardBackwardOutput`: per datum `logprobs` (and `elementwise_loss`), and `loss:sum` among the metrics. */
export interface ForwardBackwardOutput {
  loss_fn_output_type: string;
  loss_fn_outputs: Array<Record<string, TensorData>>;
  metrics: Record<string, number>;
}

/** `AdamParams` of `optim_step` (decoupled weight decay; `grad_clip_norm` 0: no clipping). */
export interface AdamParams {
  learning_rate: number;
  beta1: number;
  beta2: number;
  eps: number;
  weight_decay: number;
  grad_clip_norm: number;
}

export interface OptimStepResponse {
  metrics?: Record<string, number>;
}

export interface SamplingParams {
  max_tokens: number;
  seed?: number;
  /** Stop token ids, or stop strings (one kind per request). */
  stop?: number[] | string[];
  temperature: number;
  /** -1: no limit. */
  top_k: number;
  top_p: number;
}

export interface SampledSequence {
  stop_reason: 'length' | 'stop';
  tokens: number[];
  logprobs?: number[] | null;
}

export interface SampleResponse {
  type?: 'sample';
  sequences: SampledSequence[];
}

/** What a submitted request answers at once: the future to poll (`model_id` too for `create_model` on SkyRL). */
export interface UntypedApiFuture {
  request_id: string;
  model_id?: string;
}

/** `retrieve_future`'s answer while the request is still queued or running. */
export interface TryAgainResponse {
  type: 'try_again';
  request_id: string;
  queue_state: 'active' | 'paused_capacity' | 'paused_rate_limit';
}

/** `retrieve_future`'s answer for a request that failed. */
export interface RequestFailedResponse {
  error: string;
  category: 'user' | 'server' | 'unknown';
}

/** A token-id sequence as a `ModelInput`. */
export function modelInput(tokens: readonly number[]): ModelInput {
  return { chunks: [{ type: 'encoded_text', tokens: [...tokens] }] };
}

/** The tokens of a `ModelInput` of encoded-text chunks. */
export function inputTokens(input: ModelInput): number[] {
  return input.chunks.flatMap((chunk) => chunk.tokens);
}

export function tensor(data: ArrayLike<number>, dtype: TensorData['dtype']): TensorData {
  return { data: Array.from(data), dtype, shape: [data.length] };
}
