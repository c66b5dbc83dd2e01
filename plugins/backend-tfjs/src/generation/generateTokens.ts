import * as tf from '@tensorflow/tfjs-core';
import { DrmasError, type TopLogProb } from '@drmas/core';
import type { DecoderModel, LayerCache } from '../model/DecoderModel.js';
import { leftPad, rowStreams, sampleWithLogProb, topLogProbs, type SamplingSettings } from '@drmas/models';

export interface GenerationOptions {
  prompts: ArrayLike<number>[];
  maxNewTokens: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stopTokenIds?: number[];
  stopStrings?: string[];
  seed?: number;
  /** Decodes a row's generated ids; needed for stop strings. */
  decode?: (ids: number[]) => string;
  onToken?: (row: number, tokenId: number, logProb: number, top?: readonly TopLogProb[]) => void;
  /** How many of each step's most likely tokens `onToken` gets. */
  topLogProbs?: number;
  /** Index of the first row in the whole request, when a request is generated in chunks (seeds and onToken rows). */
  rowOffset?: number;
  /** Each row's random-stream key (`GenerateRequest.rowKeys`), for this chunk's rows; default: its index in the whole request. */
  rowKeys?: readonly number[];
  /** Each row's own seed (`GenerateRequest.rowSeeds`), for this chunk's rows. */
  rowSeeds?: readonly number[];
}

export interface GenerationOutput {
  tokenIds: number[][];
  logProbs: number[][];
  finishReasons: Array<'stop' | 'length'>;
}

/** A generation request the model cannot serve as given. */
export class GenerationError extends DrmasError {
  constructor(message: string, hint?: string) {
    super('INVALID_ARGUMENT', message, { hint });
  }
}

/**
 * Batched sampling with a KV cache. Prompts are left-padded so every row's next token is in the same column.
 * Finished rows leave the batch (their cache rows are dropped), so they neither grow nor cost compute.
 * Each row has its own random stream derived from the seed, so a row's sample does not depend on the others.
 */
export async function generateTokens(model: DecoderModel, options: GenerationOptions): Promise<GenerationOutput> {
  const rows = options.prompts.length;
  const settings: SamplingSettings = {
    temperature: options.temperature ?? 1,
    topK: options.topK ?? 0,
    topP: options.topP ?? 1,
  };
  if (options.stopStrings?.length && !options.decode) {
    throw new GenerationError(
      'stop strings need a tokenizer to decode the output; this model has none',
      'stop on token ids instead, or give the checkpoint folder a tokenizer.json',
    );
  }
  options.prompts.forEach((p, r) => {
    if (p.length === 0) throw new GenerationError(`prompt ${r} is empty; generation needs at least one prompt token`);
  });
  if (options.rowKeys && options.rowKeys.length !== rows) {
    throw new GenerationError(`rowKeys has ${options.rowKeys.length} keys for ${rows} prompts`, 'give one key per prompt, or none');
  }
  if (options.rowSeeds && options.rowSeeds.length !== rows) {
    throw new GenerationError(`rowSeeds has ${options.rowSeeds.length} seeds for ${rows} prompts`, 'give one seed per prompt, or none');
  }
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const rowOffset = options.rowOffset ?? 0;
  const rngs = rowStreams(seed, rows, options.rowKeys ?? Array.from({ length: rows }, (_, r) => r + rowOffset), options.rowSeeds);
  const stopIds = new Set(options.stopTokenIds ?? []);
  const tokenIds: number[][] = Array.from({ length: rows }, () => []);
  const logProbs: number[][] = Array.from({ length: rows }, () => []);
  const finishReasons: Array<'stop' | 'length'> = new Array<'stop' | 'length'>(rows).fill('length');
  if (rows === 0 || options.maxNewTokens <= 0) return { tokenIds, logProbs, finishReasons };

  const v = model.config.vocabSize;
  const batch = leftPad(options.prompts);
  let active = Array.from({ length: rows }, (_, r) => r);
  let columns = batch.columns;
  let keyValid = batch.valid;
  let cache: LayerCache[] | undefined;
  let input = { ids: batch.ids, positions: batch.positions, width: batch.columns };

  try {
    for (let step = 0; step < options.maxNewTokens && active.length > 0; step++) {
      const n = active.length;
      const previous = cache;
      const out = tf.tidy(() => {
        const ids = tf.tensor2d(input.ids, [n, input.width], 'int32');
        const result = model.forward({ inputIds: ids, positions: input.positions, keyValid, cache: previous }, true);
        const h = model.config.hiddenSize;
        const last = tf.reshape(tf.slice(tf.reshape(result.hidden, [n, input.width, h]), [0, input.width - 1, 0], [n, 1, h]), [n, h]);
        return { logp: tf.logSoftmax(model.logits(last as tf.Tensor2D)), cache: result.cache! } as unknown as tf.TensorContainer;
      }) as unknown as { logp: tf.Tensor2D; cache: LayerCache[] };
      disposeCache(previous);
      cache = out.cache;
      const logp = (await out.logp.data()) as Float32Array;
      out.logp.dispose();

      const still: number[] = [];
      for (let i = 0; i < n; i++) {
        const r = active[i]!;
        const row = logp.subarray(i * v, (i + 1) * v);
        const { token, logProb } = sampleWithLogProb(row, settings, rngs[r]!);
        const generated = tokenIds[r]!;
        generated.push(token);
        logProbs[r]!.push(logProb);
        const top = options.topLogProbs ? topLogProbs(row, options.topLogProbs, settings.temperature) : undefined;
        options.onToken?.(r + rowOffset, token, logProb, top);
        if (stopIds.has(token) || hitsStopString(generated, options)) finishReasons[r] = 'stop';
        else still.push(i);
      }
      if (step + 1 >= options.maxNewTokens || still.length === 0) break;

      // Next input: the sampled token of each row still running; drop finished rows from cache and mask.
      if (still.length < n) {
        const keep = tf.tensor1d(still, 'int32');
        const kept = out.cache.map((c) => ({ key: tf.gather(c.key, keep), value: tf.gather(c.value, keep) }));
        keep.dispose();
        disposeCache(out.cache);
        cache = kept;
      }
      const nextColumns = columns + 1;
      const nextValid = new Uint8Array(still.length * nextColumns);
      const ids = new Int32Array(still.length);
      const positions = new Int32Array(still.length);
      still.forEach((i, j) => {
        const r = active[i]!;
        nextValid.set(keyValid.subarray(i * columns, (i + 1) * columns), j * nextColumns);
        nextValid[j * nextColumns + columns] = 1;
        // Every row still running has just sampled a token.
        const generated = tokenIds[r]!;
        ids[j] = generated[generated.length - 1]!;
        positions[j] = batch.lengths[r]! + generated.length - 1;
      });
      active = still.map((i) => active[i]!);
      keyValid = nextValid;
      columns = nextColumns;
      input = { ids, positions, width: 1 };
    }
  } finally {
    disposeCache(cache);
  }
  return { tokenIds, logProbs, finishReasons };
}

function disposeCache(cache: LayerCache[] | undefined): void {
  if (!cache) return;
  for (const c of cache) {
    c.key.dispose();
    c.value.dispose();
  }
}

function hitsStopString(ids: number[], options: GenerationOptions): boolean {
  if (!options.stopStrings?.length || !options.decode) return false;
  // A stop string not present before this token can only span the last few tokens (at most 4 bytes per char).
  const longest = Math.max(...options.stopStrings.map((s) => s.length));
  const text = options.decode(ids.slice(-(4 * longest + 4)));
  return options.stopStrings.some((s) => s.length > 0 && text.includes(s));
}

/**
 * `generateTokens` over row chunks of at most `maxTokens` rows * (longest prompt + maxNewTokens): the wasm heap
 * aborts on much larger passes. Each row keeps the random stream it has unchunked, so the output does not depend on
 * the chunking.
 */
export async function generateInChunks(model: DecoderModel, options: GenerationOptions, maxTokens = 8192): Promise<GenerationOutput> {
  const rows = options.prompts.length;
  const out: GenerationOutput = { tokenIds: [], logProbs: [], finishReasons: [] };
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  let start = 0;
  while (start < rows || (rows === 0 && start === 0)) {
    let end = Math.min(rows, start + 1);
    let longest = rows ? options.prompts[start]!.length : 0;
    while (end < rows && (end + 1 - start) * (Math.max(longest, options.prompts[end]!.length) + options.maxNewTokens) <= maxTokens) {
      longest = Math.max(longest, options.prompts[end]!.length);
      end++;
    }
    const chunk = await generateTokens(model, {
      ...options,
      seed,
      prompts: options.prompts.slice(start, end),
      rowOffset: (options.rowOffset ?? 0) + start,
      rowKeys: options.rowKeys?.slice(start, end),
      rowSeeds: options.rowSeeds?.slice(start, end),
    });
    out.tokenIds.push(...chunk.tokenIds);
    out.logProbs.push(...chunk.logProbs);
    out.finishReasons.push(...chunk.finishReasons);
    if (rows === 0) break;
    start = end;
  }
  return out;
}
