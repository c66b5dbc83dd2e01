import type { GenerateRequest, GenerateResult } from '@drmas/core';
import type * as OrtModule from 'onnxruntime-node';
import { distinctSequences, leftPad, rotaryTables, rowStreams, sampleWithLogProb, topLogProbs, type SamplingSettings } from '@drmas/models';
import { GraphNames } from '../DecoderGraph.js';
import { forwardFeeds, MASKED, ortTensor, type Feeds } from '../DecoderFeeds.js';
import type { DecoderSessions } from '../DecoderSessions.js';
import { OnnxRequestError } from '../OnnxBackendErrors.js';
import type { WeightState } from '../weights/WeightState.js';

/** Cache slots a decode step's view grows by once the tokens fill it (`OnnxSampler.generate`). */
const SLOT_CHUNK = 32;

/** A key or value cache on the host: float32 values, or float16 ones as their bits. */
type CacheBuffer = Float32Array | Uint16Array;

/** A float16 tensor's values as their bits (onnxruntime-common returns a Float16Array where the runtime has one). */
function halfBits(data: OrtModule.Tensor['data']): Uint16Array {
  if (data instanceof Uint16Array) return data;
  const view = data as ArrayBufferView;
  return new Uint16Array(view.buffer, view.byteOffset, view.byteLength / 2);
}

/**
 * `blocks` consecutive blocks of `from` values at the start of `cache` respread in place to a stride of `to` (> from),
 * last block first so that no block is overwritten before it moves; each block's new tail is zeroed.
 */
function widenBlocks(cache: CacheBuffer, blocks: number, from: number, to: number): void {
  for (let b = blocks - 1; b >= 0; b--) {
    cache.copyWithin(b * to, b * from, b * from + from);
    cache.fill(0, b * to + from, (b + 1) * to);
  }
}

/**
 * The onnx sampler: `generate` on the prefill and decode graphs. Equal prompts are prefilled once, the KV caches are
 * host buffers the decode graph reads in place, finished rows leave the batch, and tokens are drawn by `@drmas/models`'
 * `sampleWithLogProb` (`sampleToken` and the token's log-prob) on per-row `SeededRandom` streams, as the tfjs backend draws them.
 */
export class OnnxSampler {
  constructor(
    private readonly state: WeightState,
    private readonly sessions: DecoderSessions,
  ) {}

  /** Stop ids used when a request gives none: config.json's eos ids and the tokenizer's eos. */
  defaultStopTokenIds(): number[] {
    const ids = new Set(this.state.config.eosTokenIds);
    if (this.state.tokenizer?.eosTokenId !== undefined) ids.add(this.state.tokenizer.eosTokenId);
    return [...ids];
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const c = this.state.config;
    const { ort } = this.sessions;
    const rows = request.prompts.length;
    const settings: SamplingSettings = { temperature: request.temperature ?? 1, topK: request.topK ?? 0, topP: request.topP ?? 1 };
    const stopStrings = request.stopStrings ?? [];
    const tokenizer = this.state.tokenizer;
    if (stopStrings.length > 0 && !tokenizer) {
      throw new OnnxRequestError(
        'stop strings need a tokenizer to decode the output; this model has none',
        'stop on token ids instead, or give the checkpoint folder a tokenizer.json',
      );
    }
    request.prompts.forEach((p, r) => {
      if (p.length === 0) throw new OnnxRequestError(`prompt ${r} is empty; generation needs at least one prompt token`);
    });
    const seed = request.seed ?? Math.floor(Math.random() * 2 ** 31);
    if (request.rowKeys && request.rowKeys.length !== rows) {
      throw new OnnxRequestError(`rowKeys has ${request.rowKeys.length} keys for ${rows} prompts`, 'give one key per prompt, or none');
    }
    if (request.rowSeeds && request.rowSeeds.length !== rows) {
      throw new OnnxRequestError(`rowSeeds has ${request.rowSeeds.length} seeds for ${rows} prompts`, 'give one seed per prompt, or none');
    }
    const rngs = rowStreams(seed, rows, request.rowKeys, request.rowSeeds);
    const stopIds = new Set(request.stopTokenIds ?? this.defaultStopTokenIds());
    const tokenIds: number[][] = Array.from({ length: rows }, () => []);
    const logProbs: number[][] = Array.from({ length: rows }, () => []);
    const finishReasons: Array<'stop' | 'length'> = new Array<'stop' | 'length'>(rows).fill('length');
    const maxNew = request.maxNewTokens;
    if (rows === 0 || maxNew <= 0) return { tokenIds, logProbs, finishReasons };
    const longestStop = Math.max(0, ...stopStrings.map((s) => s.length));
    const hitsStopString = (ids: number[]): boolean => {
      if (longestStop === 0 || !tokenizer) return false;
      // A stop string not present before this token can only span the last few tokens (at most 4 bytes per char).
      const text = tokenizer.decode(ids.slice(-(4 * longestStop + 4)));
      return stopStrings.some((s) => s.length > 0 && text.includes(s));
    };

    const v = c.vocabSize;
    const d = c.headDim;
    const kv = c.numKvHeads;
    const layers = c.numLayers;
    // The samples of one prompt share its prefill: each distinct prompt runs once, its rows get copies of its keys,
    // values and first log-probs. The distinct prompts are as long as the longest of all, so the columns (and the
    // cache slots every later step attends over) are those of the whole batch.
    const { distinct, of } = distinctSequences(request.prompts);
    const batch = leftPad(distinct);
    const columns = batch.columns;
    // Cache slots: the prompt columns plus every generated token but the last, allocated at once. The graphs see the
    // first `capacity` of them, laid out `[rows, kv, capacity, d]` at the start of each buffer, and `capacity` grows
    // in place by SLOT_CHUNK as the tokens fill it, so a step attends over the slots filled so far (rounded up to a
    // chunk) rather than over all of them.
    const slots = columns + maxNew - 1;
    let capacity = Math.min(slots, columns + SLOT_CHUNK);
    // Float32 values, or under a float16 cache (`DecoderSessions.kvCachePrecision`) their float16 bits.
    const half = this.sessions.kvCachePrecision === 'float16';
    const newCache = (): CacheBuffer => (half ? new Uint16Array(rows * kv * d * slots) : new Float32Array(rows * kv * d * slots));
    const cacheValues = (t: OrtModule.Tensor): CacheBuffer => (half ? halfBits(t.data) : (t.data as Float32Array));
    const cacheTensor = (data: CacheBuffer, dims: number[]): OrtModule.Tensor =>
      data instanceof Uint16Array ? new ort.Tensor('float16', data, dims) : ortTensor(ort, data, dims);
    const keyCache = Array.from({ length: layers }, newCache);
    const valueCache = Array.from({ length: layers }, newCache);
    const valid = new Uint8Array(rows * slots);

    // Prefill: every column of the distinct prompts at once.
    const prefill = await this.sessions.run('prefill', forwardFeeds(ort, c, this.state.invFreq, { ...batch, columns }));
    for (let l = 0; l < layers; l++) {
      const keys = cacheValues(prefill[GraphNames.key(l)]!);
      const values = cacheValues(prefill[GraphNames.value(l)]!);
      const kc = keyCache[l]!;
      const vc = valueCache[l]!;
      for (let r = 0; r < rows; r++) {
        const u = of[r]!;
        for (let i = 0; i < kv; i++) {
          const from = (u * kv + i) * columns * d;
          kc.set(keys.subarray(from, from + columns * d), (r * kv + i) * capacity * d);
          vc.set(values.subarray(from, from + columns * d), (r * kv + i) * capacity * d);
        }
      }
    }
    const lengths = Array.from(of, (u) => batch.lengths[u]!);
    for (let r = 0; r < rows; r++) valid.set(batch.valid.subarray(of[r]! * columns, (of[r]! + 1) * columns), r * slots);
    const distinctLogp = prefill[GraphNames.logProbs]!.data as Float32Array;
    let logp = distinctLogp;
    if (distinct.length < rows) {
      logp = new Float32Array(rows * v);
      for (let r = 0; r < rows; r++) logp.set(distinctLogp.subarray(of[r]! * v, (of[r]! + 1) * v), r * v);
    }
    let filled = columns;
    let active = Array.from({ length: rows }, (_, r) => r);

    for (let step = 0; ; step++) {
      const n = active.length;
      const still: number[] = [];
      for (let i = 0; i < n; i++) {
        const r = active[i]!;
        const row = logp.subarray(i * v, (i + 1) * v);
        const { token, logProb } = sampleWithLogProb(row, settings, rngs[r]!);
        const ids = tokenIds[r]!;
        ids.push(token);
        logProbs[r]!.push(logProb);
        const top = request.topLogProbs ? topLogProbs(row, request.topLogProbs, settings.temperature) : undefined;
        request.onToken?.(r, token, logProb, top);
        if (stopIds.has(token) || hitsStopString(ids)) finishReasons[r] = 'stop';
        else still.push(i);
      }
      if (step + 1 >= maxNew || still.length === 0) break;

      // Finished rows leave the batch: the first `m` rows of each cache (rows are the outer axis) are the block the
      // next run reads in place. A finished row among them takes the place of a running row from beyond them, so
      // only as many rows move as have finished; each row's tokens do not depend on its place in the batch.
      const m = still.length;
      const rowBlock = kv * capacity * d;
      const order = active.slice(0, m);
      const running = new Uint8Array(n);
      for (const i of still) running[i] = 1;
      const movers = still.filter((i) => i >= m);
      let next = 0;
      for (let j = 0; j < m && next < movers.length; j++) {
        if (running[j]) continue;
        const i = movers[next++]!;
        for (let l = 0; l < layers; l++) {
          keyCache[l]!.copyWithin(j * rowBlock, i * rowBlock, (i + 1) * rowBlock);
          valueCache[l]!.copyWithin(j * rowBlock, i * rowBlock, (i + 1) * rowBlock);
        }
        valid.copyWithin(j * slots, i * slots, (i + 1) * slots);
        order[j] = active[i]!;
      }
      active = order;
      if (filled === capacity) {
        const grown = Math.min(slots, capacity + SLOT_CHUNK);
        for (const cache of [...keyCache, ...valueCache]) widenBlocks(cache, m * kv, capacity * d, grown * d);
        capacity = grown;
      }

      const ids = new BigInt64Array(m);
      const positions = new Int32Array(m);
      const bias = new Float32Array(m * (capacity + 1));
      for (let j = 0; j < m; j++) {
        const r = active[j]!;
        // Every active row has sampled at least one token.
        const generated = tokenIds[r]!;
        ids[j] = BigInt(generated[generated.length - 1]!);
        positions[j] = lengths[r]! + generated.length - 1;
        for (let t = 0; t < capacity; t++) if (valid[j * slots + t] === 0) bias[j * (capacity + 1) + t] = MASKED;
      }
      const { cos, sinSigned } = rotaryTables(this.state.invFreq, positions);
      const feeds: Feeds = {
        [GraphNames.inputIds]: ortTensor(ort, ids, [m, 1]),
        [GraphNames.ropeCos]: ortTensor(ort, cos, [m, 1, 1, d]),
        [GraphNames.ropeSin]: ortTensor(ort, sinSigned, [m, 1, 1, d]),
        [GraphNames.attentionBias]: ortTensor(ort, bias, [m, 1, 1, capacity + 1]),
      };
      const view = m * kv * capacity * d;
      for (let l = 0; l < layers; l++) {
        feeds[GraphNames.pastKey(l)] = cacheTensor(keyCache[l]!.subarray(0, view), [m, kv, capacity, d]);
        feeds[GraphNames.pastValue(l)] = cacheTensor(valueCache[l]!.subarray(0, view), [m, kv, capacity, d]);
      }
      const out = await this.sessions.run('decode', feeds);
      for (let l = 0; l < layers; l++) {
        const key = cacheValues(out[GraphNames.key(l)]!);
        const value = cacheValues(out[GraphNames.value(l)]!);
        const kc = keyCache[l]!;
        const vc = valueCache[l]!;
        // One headDim run per row and head, copied element-wise: a subarray per run cost more than the copy at 2,048
        // runs (317-427 against 407-803 us isolated) and as much at 64.
        for (let i = 0; i < m * kv; i++) {
          const at = (i * capacity + filled) * d - i * d;
          for (let e = i * d; e < (i + 1) * d; e++) {
            kc[at + e] = key[e]!;
            vc[at + e] = value[e]!;
          }
        }
      }
      for (let j = 0; j < m; j++) valid[j * slots + filled] = 1;
      filled++;
      logp = out[GraphNames.logProbs]!.data as Float32Array;
    }
    return { tokenIds, logProbs, finishReasons };
  }
}
