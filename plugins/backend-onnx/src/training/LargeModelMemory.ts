/**
 * What the onnx engine does differently for a model that gets the `shared` weight layout (`SHARED_LAYOUT_BYTES` of
 * float32 weights and up: Qwen2.5-0.5B and larger), so that a training step's peak is its state plus one bounded
 * micro-batch: the sessions run without onnxruntime's CPU arena, micro-batches are split by a token budget unless
 * the request sets one, and what each training run returns is freed before the next run. Smaller models (the
 * built-in `tiny` and `small`) run as before, bit for bit.
 */
import { activationBytesPerToken, loraModuleShape, matrixWeightCount, type DecoderConfig, type ModelShape } from '@drmas/models';
import { formatBytes, isLoraTargetModule } from '@drmas/core';
import type * as OrtModule from 'onnxruntime-node';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { defaultWeightLayout, SHARED_LAYOUT_BYTES } from '../GraphWeights.js';
import { HEAD_VOCAB_CHUNK } from '../VocabChunkedHead.js';

/**
 * Activations one training micro-batch may keep by default at the least, as `activationBytesPerToken` counts them (the
 * run holds more: attention probabilities and the backward's transients; measured 3.8 MB a token at Qwen2.5-0.5B
 * against 1.9 MB counted, bench/RESULTS.md "Real model sizes"); what the backward's segments are sized by.
 */
export const MICRO_BATCH_ACTIVATION_BYTES = 2 ** 29;

/**
 * The share of the run's memory budget (`trainer.memoryBudget`) one micro-batch's activations may take by default, as
 * counted (the run holds about `RUN_ACTIVATION_FACTOR` times that). Each run costs a pass over the gradients whatever
 * its tokens (the graph adds them to the accumulated ones, and onnxruntime-node returns a copy): at Qwen2.5-0.5B about
 * 2 s, what some 60 tokens' forward and backward take, so fewer, larger runs train faster (one run of 632 tokens
 * against three of 282: 1.16x, bench/RESULTS.md "A larger micro-batch at Qwen2.5-0.5B"). 1/14 of a 24 GB machine's
 * default budget (75%) is 1.26 GiB: 711 tokens at Qwen2.5-0.5B, a GRPO group of 8 rows of 80 tokens in one run;
 * 878 MiB on a 16 GB machine; from a budget of 7 GiB down, `MICRO_BATCH_ACTIVATION_BYTES`.
 */
export const MICRO_BATCH_BUDGET_SHARE = 1 / 14;

/** The shape fields the budget reads (a `DecoderConfig`, or a `ModelShape` read from config.json alone). */
export type BudgetShape = Parameters<typeof activationBytesPerToken>[0];

/** Tokens whose activations (one `HEAD_VOCAB_CHUNK`-wide head) fill `bytes`, at least one. */
function tokensFilling(bytes: number, shape: BudgetShape): number {
  return Math.max(1, Math.floor(bytes / activationBytesPerToken(shape, HEAD_VOCAB_CHUNK)));
}

/**
 * A large model's default micro-batch bound: its tokens, and how they came about (what `drmas validate` prints); the
 * fields of the same name in `BackendFactory.trainingBytesPerToken`'s estimate.
 */
export interface MicroBatchBound {
  microBatchTokens: number;
  microBatchReason: string;
}

/**
 * One default micro-batch at a large size: as many tokens as `MICRO_BATCH_BUDGET_SHARE` of `budgetBytes` holds in
 * activations, and at least `MICRO_BATCH_ACTIVATION_BYTES`' worth.
 */
export function microBatchBound(shape: BudgetShape, budgetBytes: number): MicroBatchBound {
  const share = MICRO_BATCH_BUDGET_SHARE * budgetBytes;
  const fraction = `1/${Math.round(1 / MICRO_BATCH_BUDGET_SHARE)} of the memory budget`;
  return share > MICRO_BATCH_ACTIVATION_BYTES
    ? { microBatchTokens: tokensFilling(share, shape), microBatchReason: `activations of ${fraction}, ${formatBytes(share)}` }
    : {
        microBatchTokens: tokensFilling(MICRO_BATCH_ACTIVATION_BYTES, shape),
        microBatchReason: `activations of ${formatBytes(MICRO_BATCH_ACTIVATION_BYTES)}, its least (${fraction} is ${formatBytes(share)})`,
      };
}

/**
 * Padded tokens per micro-batch a large model's training runs take when the request sets none: `microBatchBound` of
 * the run's budget, or the batch's widest row (its prompt and response) where that is more: a run of that row alone
 * holds as much, so shorter rows packed up to its width cost no more memory, in fewer runs. Undefined below the shared
 * layout's size, where micro-batches go by rows alone.
 */
export function defaultMicroBatchTokens(config: DecoderConfig, budgetBytes: number, widestRow = 0): number | undefined {
  return defaultWeightLayout(config) === 'shared' ? Math.max(microBatchBound(config, budgetBytes).microBatchTokens, widestRow) : undefined;
}

/** `models.<id>.backwardSegments`: `auto`, or how many segments of layers a training run's backward takes. */
export type BackwardSegmentsSetting = number | 'auto';

/** The shape fields the segments are chosen from. */
export type SegmentShape = BudgetShape & { numHeads: number };

/**
 * The activations one training run holds at the least default micro-batch (`MICRO_BATCH_ACTIVATION_BYTES`' tokens,
 * `RUN_ACTIVATION_FACTOR` x the count), whatever the budget: what the backward's segments are sized by.
 */
function runActivationBytes(shape: BudgetShape): number {
  return RUN_ACTIVATION_FACTOR * tokensFilling(MICRO_BATCH_ACTIVATION_BYTES, shape) * activationBytesPerToken(shape, HEAD_VOCAB_CHUNK);
}

/** Float32 bytes of one layer's weights (its projections; norms and biases aside). */
function layerGradientBytes(shape: SegmentShape): number {
  const attention = shape.hiddenSize * shape.headDim * 2 * (shape.numHeads + shape.numKvHeads);
  return 4 * (attention + 3 * shape.hiddenSize * shape.intermediateSize);
}

/** Float32 bytes of the gradients a run of layers `[start, end)` returns: its layers', and the head's in the top one. */
function segmentGradientBytes(shape: SegmentShape, [start, end]: [number, number]): number {
  const head = end === shape.numLayers ? 4 * shape.vocabSize * shape.hiddenSize : 0;
  return (end - start) * layerGradientBytes(shape) + head;
}

/**
 * The layer ranges `[start, end)` a full fine-tune's forward/backward runs in, bottom to top (one range: the whole
 * model in one graph). A segmented backward runs the segments below the last forward, keeping only the hidden states
 * between them, then each segment from the top down: its forward again and its backward, from the loss's gradient
 * with respect to its output (the segment above's returned gradient of its input). Each run then holds one segment's
 * activations, and onnxruntime-node's returned copy of that segment's gradients only (it copies every output, the
 * bound gradients too: `releaseRunOutputs`), for one forward of the lower segments more.
 *
 * `auto` segments a `large` full fine-tune (from the shared layout's size, `SHARED_LAYOUT_BYTES`; LoRA's gradients are
 * the adapters', and it trains in one graph) whose gradients exceed one run's activations at the least default
 * micro-batch (`runActivationBytes`), so that no run's returned gradients exceed them: from the top, the output head's
 * gradient (`[vocab, hidden]`) and layers while they fit, at least one layer a segment. A number splits the layers into that many segments of
 * equal size (1: one graph).
 */
export function backwardSegments(shape: SegmentShape, setting: BackwardSegmentsSetting, large: boolean): Array<[number, number]> {
  const layers = shape.numLayers;
  if (setting !== 'auto') {
    const count = Math.min(Math.max(1, Math.floor(setting)), layers);
    return Array.from({ length: count }, (_, k): [number, number] => [
      Math.round((k * layers) / count),
      Math.round(((k + 1) * layers) / count),
    ]);
  }
  const budget = runActivationBytes(shape);
  if (!large || segmentGradientBytes(shape, [0, layers]) <= budget) return [[0, layers]];
  const segments: Array<[number, number]> = [];
  let end = layers;
  for (let start = layers - 1; start >= 0; start--) {
    // The segment grows down to `start` while its gradients fit (at least one layer a segment).
    if (start < end - 1 && segmentGradientBytes(shape, [start, end]) > budget) {
      segments.unshift([start + 1, end]);
      end = start + 1;
    }
  }
  segments.unshift([0, end]);
  return segments;
}

/**
 * Session options for `config`'s graphs: without the CPU arena at the shared layout's sizes (onnxruntime otherwise
 * keeps the largest activations each session ever held, the sampling sessions' through training and the training
 * session's through sampling); `options` (the model's own settings) win.
 */
export function largeModelSessionOptions(
  config: DecoderConfig,
  options: OrtModule.InferenceSession.SessionOptions | undefined,
): OrtModule.InferenceSession.SessionOptions | undefined {
  if (defaultWeightLayout(config) !== 'shared') return options;
  return { enableCpuMemArena: false, ...options };
}

/**
 * Disposes what a training run returned and, from the shared layout's size, frees it before the next run:
 * onnxruntime-node 1.30 hands every output back in a new ArrayBuffer, the outputs bound to the trainer's own buffers
 * too (a copy, checked here), and V8 frees one only at a garbage collection, which a loop of native runs seldom
 * triggers: at Qwen2.5-0.5B each run's 1.84 GiB copy of the gradients stayed alive through the next run's backward.
 * Two full collections take tens of milliseconds against seconds a run.
 */
export function releaseRunOutputs(config: DecoderConfig, outputs: Record<string, OrtModule.Tensor>): void {
  for (const t of Object.values(outputs)) t.dispose();
  if (defaultWeightLayout(config) !== 'shared') return;
  collector ??= garbageCollector();
  // Twice: a collection finishes the marking V8 may have under way, in which the copy, allocated while it ran, counts
  // as live; only the second one starts from the roots again.
  collector();
  collector();
}

let collector: (() => void) | undefined;

/** V8's full collection: `gc` where Node runs with --expose-gc, else exposed once (what the flag does at start). */
function garbageCollector(): () => void {
  const exposed: unknown = Reflect.get(globalThis, 'gc');
  if (isCollector(exposed)) return exposed;
  setFlagsFromString('--expose-gc');
  const made: unknown = runInNewContext('gc');
  if (!isCollector(made)) throw new Error('releaseRunOutputs: V8 did not expose its garbage collector');
  return made;
}

function isCollector(value: unknown): value is () => void {
  return typeof value === 'function';
}

/**
 * How many times over a large model's training run holds the activations `activationBytesPerToken` counts: they
 * leave out attention probabilities and the backward's transients. Measured at Qwen2.5-0.5B (24 layers, rows of
 * 328 tokens): 1.8x for micro-batches of 328 tokens, 2.5x for 656, 2.1x for 2,624 (bench/RESULTS.md).
 */
export const RUN_ACTIVATION_FACTOR = 2;

/** Node's and onnxruntime-node's own resident memory, before any model (`drmas train` at its start: 0.27 GiB). */
export const RUNTIME_BASELINE_BYTES = 300 * 2 ** 20;

/**
 * What a full fine-tune's training run holds whatever its tokens, besides the training state and Node's and
 * onnxruntime's own memory: onnxruntime-node's copy of the gradients a run returns. Below the shared layout's size the
 * copies wait for V8's next collection, beside the next run, and the head's and the tied embedding's gradients are
 * whole `[vocab, hidden]` tensors (three of them). From that size a run's copy is made once its activations are gone
 * and freed before the next run (`releaseRunOutputs`), so it counts as far as it exceeds one micro-batch's activations
 * at the least default bound (`runActivationBytes`; the estimate counts them); the head's gradient passes in vocabulary blocks (`RowBlocks`),
 * with no `[vocab, hidden]` tensor; and a segmented backward (`backwardSegments`, `setting`) returns one segment's
 * gradients a run, the largest segment's counting.
 */
export function runOverheadBytes(shape: ModelShape, setting: BackwardSegmentsSetting = 'auto'): { bytes: number; reason: string } {
  const gradients = 4 * matrixWeightCount(shape);
  const runtime = `Node and onnxruntime ${formatBytes(RUNTIME_BASELINE_BYTES)}`;
  if (gradients < SHARED_LAYOUT_BYTES) {
    const embedding = 3 * 4 * shape.vocabSize * shape.hiddenSize;
    return {
      bytes: gradients + embedding + RUNTIME_BASELINE_BYTES,
      reason: `onnxruntime-node's copy of the gradients a run returns ${formatBytes(gradients)}, three [vocab, hidden] gradients in a run ${formatBytes(embedding)}, ${runtime}`,
    };
  }
  const segments = backwardSegments(shape, setting, true);
  const activations = runActivationBytes(shape);
  const returned = segments.length === 1 ? gradients : Math.max(...segments.map((range) => segmentGradientBytes(shape, range)));
  const what = segments.length === 1 ? 'the gradients' : `the largest of ${segments.length} segments' gradients`;
  const beyond = Math.max(0, returned - activations);
  return {
    bytes: beyond + RUNTIME_BASELINE_BYTES,
    reason:
      `onnxruntime-node's copy of ${what} a run returns ${formatBytes(returned)} beyond one micro-batch's ` +
      `activations ${formatBytes(activations)}: ${formatBytes(beyond)}; ${runtime}`,
  };
}

/**
 * What LoRA training holds whatever the batch: the frozen base's float32 weights once (every adapter's engine reads
 * the run's one copy), each adapter's weights, gradients, AdamW's two moments and the gradients' returned copy (5 x
 * rank x (in + out) per targeted module and layer, float32), and Node's and onnxruntime's own memory.
 */
export function loraStateBytes(
  shape: ModelShape,
  adapters: ReadonlyArray<{ rank: number; targetModules: readonly string[] }>,
): { bytes: number; reason: string } {
  const base = 4 * matrixWeightCount(shape);
  let adapterValues = 0;
  for (const { rank, targetModules } of adapters) {
    for (const module of targetModules.filter(isLoraTargetModule)) {
      const [out, inputs] = loraModuleShape(shape, module);
      adapterValues += shape.numLayers * rank * (inputs + out);
    }
  }
  const adapterBytes = 5 * 4 * adapterValues;
  return {
    bytes: base + adapterBytes + RUNTIME_BASELINE_BYTES,
    reason:
      `float32 frozen base ${formatBytes(base)}; ${adapters.length} LoRA adapter${adapters.length > 1 ? 's' : ''}' weights, gradients, ` +
      `AdamW's two moments and the gradients' returned copy 5 x ${formatBytes(adapterBytes / 5)}; Node and onnxruntime ${formatBytes(RUNTIME_BASELINE_BYTES)}`,
  };
}
