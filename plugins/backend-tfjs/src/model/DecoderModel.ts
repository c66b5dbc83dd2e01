import * as tf from '@tensorflow/tfjs-core';
import {
  expectedWeightShapes,
  expectTensor,
  ModelWeightError,
  rotaryInverseFrequencies,
  rotaryTables,
  type CheckpointTensor,
  type DecoderConfig,
  type HostTensor,
} from '@drmas/models';
import { plainMatMul } from './plainMatMul.js';

/** Keys and values of one layer for the columns seen so far, `[batch, kvHeads, columns, headDim]` (keys after rope). */
export interface LayerCache {
  key: tf.Tensor4D;
  value: tf.Tensor4D;
}

export interface ForwardInput {
  /** int32 `[batch, columns]`. */
  inputIds: tf.Tensor2D;
  /** Rotary position of every input token, row-major `[batch * columns]`. */
  positions: ArrayLike<number>;
  /**
   * 1 for a real token, 0 for padding, over all key columns `[batch * (cachedColumns + columns)]`. Attention is
   * causal over columns and never looks at padding.
   */
  keyValid: Uint8Array;
  cache?: LayerCache[];
  /**
   * Whether gradients to the weights are needed. When not, projections use cached transposed copies of the
   * weights (tfjs-wasm multiplies by a transposed operand ~10x slower than by a plain one).
   */
  differentiable?: boolean;
}

export interface ForwardOutput {
  /** Final-normed hidden states `[batch * columns, hidden]`. */
  hidden: tf.Tensor2D;
  /** Caches including this call's columns (only when `withCache`). */
  cache?: LayerCache[];
}

const MASKED = -1e9;

/** A Llama / Qwen2 / Qwen3 decoder over tf.Variables named like Hugging Face's tensors. */
export class DecoderModel {
  readonly config: DecoderConfig;
  readonly weights: Map<string, tf.Variable>;
  private readonly invFreq: Float64Array;
  /** `[in, out]` copies of projection weights for inference, each tagged with the variable data it was made from. */
  private readonly transposed = new Map<string, { source: object; value: tf.Tensor2D }>();
  private differentiable = false;
  private disposed = false;

  private constructor(config: DecoderConfig, weights: Map<string, tf.Variable>) {
    this.config = config;
    this.weights = weights;
    this.invFreq = rotaryInverseFrequencies(config);
  }

  /** Builds the model from host tensors, checking every expected name and shape; extra tensors are ignored. */
  static fromTensors(config: DecoderConfig, tensors: Map<string, HostTensor>): DecoderModel {
    const expected = expectedWeightShapes(config);
    for (const [name, shape] of expected) expectTensor(tensors as Map<string, CheckpointTensor>, name, shape);
    const weights = new Map<string, tf.Variable>();
    for (const [name, shape] of expected) {
      const data = tensors.get(name)!.data;
      weights.set(
        name,
        tf.tidy(() => tf.variable(tf.tensor(data, shape, 'float32'), true, uniqueVariableName(name))),
      );
    }
    return new DecoderModel(config, weights);
  }

  weight(name: string): tf.Variable {
    const w = this.weights.get(name);
    if (!w) throw new ModelWeightError(name, expectedWeightShapes(this.config).get(name) ?? [], 'is not part of this model');
    return w;
  }

  /** Output projection weight `[vocab, hidden]` (the embedding when tied). */
  get lmHeadWeight(): tf.Variable {
    return this.weight(this.config.tieWordEmbeddings ? 'model.embed_tokens.weight' : 'lm_head.weight');
  }

  /**
   * Runs the decoder on `[batch, columns]` tokens after the cached columns. Allocates tensors: call inside
   * `tf.tidy` (returned tensors survive it when returned from the tidy callback).
   */
  forward(input: ForwardInput, withCache = false): ForwardOutput {
    const c = this.config;
    const [batch, columns] = input.inputIds.shape;
    const past = input.cache?.[0]?.key.shape[2] ?? 0;
    const group = c.numHeads / c.numKvHeads;
    const { cos, sinSigned } = rotaryTables(this.invFreq, input.positions);
    const cosT = tf.tensor4d(cos, [batch, columns, 1, c.headDim]);
    const sinT = tf.tensor4d(sinSigned, [batch, columns, 1, c.headDim]);
    const mask = attentionMask(input.keyValid, batch, columns, past, group);
    this.differentiable = input.differentiable ?? false;

    let x: tf.Tensor2D = embeddingLookup(this.weight('model.embed_tokens.weight'), tf.reshape<tf.Rank.R1>(input.inputIds, [-1]));
    const newCache: LayerCache[] = [];
    for (let i = 0; i < c.numLayers; i++) {
      const p = `model.layers.${i}`;
      const normed = this.rmsNorm(x, `${p}.input_layernorm.weight`);
      const { output, cache } = this.attention(normed, p, batch, columns, cosT, sinT, mask, input.cache?.[i]);
      if (withCache) newCache.push(cache);
      x = tf.add(x, output);
      const normed2 = this.rmsNorm(x, `${p}.post_attention_layernorm.weight`);
      x = tf.add(x, this.mlp(normed2, p));
    }
    const hidden = this.rmsNorm<tf.Tensor2D>(x, 'model.norm.weight');
    return withCache ? { hidden, cache: newCache } : { hidden };
  }

  /** `[rows, hidden]` -> `[rows, vocab]`; differentiable when the last `forward` was. */
  logits(hidden: tf.Tensor2D): tf.Tensor2D {
    const name = this.config.tieWordEmbeddings ? 'model.embed_tokens.weight' : 'lm_head.weight';
    return plainMatMul(hidden, this.projection(name));
  }

  /**
   * The weight `[out, in]` transposed to `[in, out]`. Without gradients, a cached copy, remade when the variable
   * was assigned since (an assign gives the variable a new data id).
   */
  private projection(name: string): tf.Tensor2D {
    const w = this.weight(name);
    if (this.differentiable) return tf.transpose(w) as tf.Tensor2D;
    const cached = this.transposed.get(name);
    if (cached && cached.source === w.dataId && !cached.value.isDisposed) return cached.value;
    cached?.value.dispose();
    const value = tf.keep(tf.tidy(() => tf.transpose(w) as tf.Tensor2D));
    this.transposed.set(name, { source: w.dataId, value });
    return value;
  }

  private linear(x: tf.Tensor2D, name: string, hasBias: boolean): tf.Tensor2D {
    const y: tf.Tensor2D = plainMatMul(x, this.projection(`${name}.weight`));
    return hasBias ? tf.add<tf.Tensor2D>(y, this.weight(`${name}.bias`)) : y;
  }

  /** RMSNorm over the last axis, computed in float32 like transformers' `LlamaRMSNorm`. */
  private rmsNorm<T extends tf.Tensor>(x: T, weightName: string): T {
    const variance = tf.mean(tf.square(x), -1, true);
    return tf.mul<T>(tf.mul(x, tf.rsqrt(tf.add(variance, this.config.rmsNormEps))), this.weight(weightName));
  }

  private attention(
    x: tf.Tensor2D,
    prefix: string,
    batch: number,
    columns: number,
    cos: tf.Tensor4D,
    sinSigned: tf.Tensor4D,
    mask: tf.Tensor4D,
    cache: LayerCache | undefined,
  ): { output: tf.Tensor2D; cache: LayerCache } {
    const c = this.config;
    const d = c.headDim;
    const group = c.numHeads / c.numKvHeads;
    const a = `${prefix}.self_attn`;
    let q = tf.reshape<tf.Rank.R4>(this.linear(x, `${a}.q_proj`, c.qkvBias), [batch, columns, c.numHeads, d]);
    let k = tf.reshape<tf.Rank.R4>(this.linear(x, `${a}.k_proj`, c.qkvBias), [batch, columns, c.numKvHeads, d]);
    const v = tf.reshape<tf.Rank.R4>(this.linear(x, `${a}.v_proj`, c.qkvBias), [batch, columns, c.numKvHeads, d]);
    if (c.qkNorm) {
      q = this.rmsNorm(q, `${a}.q_norm.weight`);
      k = this.rmsNorm(k, `${a}.k_norm.weight`);
    }
    q = applyRotary(q, cos, sinSigned);
    k = applyRotary(k, cos, sinSigned);

    // Query head h uses KV head floor(h / group) (transformers' repeat_kv): fold the group into the query rows.
    const qGrouped = tf.reshape(tf.transpose(tf.reshape(q, [batch, columns, c.numKvHeads, group, d]), [0, 2, 3, 1, 4]), [
      batch,
      c.numKvHeads,
      group * columns,
      d,
    ]);
    let keys = tf.transpose<tf.Tensor4D>(k, [0, 2, 1, 3]);
    let values = tf.transpose<tf.Tensor4D>(v, [0, 2, 1, 3]);
    if (cache) {
      keys = tf.concat([cache.key, keys], 2);
      values = tf.concat([cache.value, values], 2);
    }
    const keysT = tf.transpose(keys, [0, 1, 3, 2]);
    const scores = tf.add(tf.mul(plainMatMul(qGrouped, keysT), 1 / Math.sqrt(d)), mask);
    const probs = tf.softmax(scores);
    const context = tf.reshape<tf.Rank.R2>(
      tf.transpose(tf.reshape(plainMatMul(probs, values), [batch, c.numKvHeads, group, columns, d]), [0, 3, 1, 2, 4]),
      [batch * columns, c.numHeads * d],
    );
    return { output: this.linear(context, `${a}.o_proj`, c.outputBias), cache: { key: keys, value: values } };
  }

  private mlp(x: tf.Tensor2D, prefix: string): tf.Tensor2D {
    const bias = this.config.mlpBias;
    const gate = this.linear(x, `${prefix}.mlp.gate_proj`, bias);
    const up = this.linear(x, `${prefix}.mlp.up_proj`, bias);
    return this.linear(tf.mul(tf.mul(gate, tf.sigmoid(gate)), up), `${prefix}.mlp.down_proj`, bias);
  }

  /** Host copies of all weights by HF name. */
  async exportTensors(): Promise<Map<string, HostTensor>> {
    const out = new Map<string, HostTensor>();
    for (const [name, w] of this.weights) {
      out.set(name, { shape: [...w.shape], data: (await w.data()) as Float32Array });
    }
    return out;
  }

  /** Overwrites weights from host tensors (same names and shapes). */
  assignTensors(tensors: Map<string, HostTensor>): void {
    const expected = expectedWeightShapes(this.config);
    for (const [name, shape] of expected) expectTensor(tensors as Map<string, CheckpointTensor>, name, shape);
    for (const [name, shape] of expected) {
      tf.tidy(() => this.weight(name).assign(tf.tensor(tensors.get(name)!.data, shape, 'float32')));
    }
  }

  get parameterCount(): number {
    let n = 0;
    for (const w of this.weights.values()) n += w.size;
    return n;
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const w of this.weights.values()) w.dispose();
    for (const t of this.transposed.values()) t.value.dispose();
    this.transposed.clear();
  }
}

let variableCounter = 0;
/**
 * tfjs variable names are global to the engine, and several models live in one process, possibly made by two copies
 * of this module (an in-process command loading the package by name beside one loaded from source): a name is free
 * only if the engine has none of it.
 */
function uniqueVariableName(name: string): string {
  const taken = tf.engine().registeredVariables;
  let candidate: string;
  do {
    variableCounter += 1;
    candidate = `drmas/${variableCounter}/${name}`;
  } while (candidate in taken);
  return candidate;
}

/** `x * cos + swap_halves(x) * sinSigned`, x `[batch, columns, heads, headDim]`. */
function applyRotary(x: tf.Tensor4D, cos: tf.Tensor4D, sinSigned: tf.Tensor4D): tf.Tensor4D {
  const [b, t, h, d] = x.shape;
  const swapped = tf.reshape(tf.reverse(tf.reshape(x, [b, t, h, 2, d / 2]), 3), [b, t, h, d]);
  return tf.add(tf.mul(x, cos), tf.mul(swapped, sinSigned));
}

/** Additive mask `[batch, 1, group * columns, past + columns]`: causal over columns, padding keys hidden. */
function attentionMask(keyValid: Uint8Array, batch: number, columns: number, past: number, group: number): tf.Tensor4D {
  const keys = past + columns;
  const data = new Float32Array(batch * group * columns * keys);
  let o = 0;
  for (let b = 0; b < batch; b++) {
    const valid = b * keys;
    for (let g = 0; g < group; g++) {
      for (let q = 0; q < columns; q++) {
        const last = past + q;
        for (let k = 0; k < keys; k++, o++) {
          if (k > last || keyValid[valid + k] === 0) data[o] = MASKED;
        }
      }
    }
  }
  return tf.tensor4d(data, [batch, 1, group * columns, keys]);
}

/**
 * `gather(table, ids)`. Where the backend lacks UnsortedSegmentSum (wasm), the gradient is a scatter-add
 * (`scatterND` sums duplicate indices) instead of gather's default gradient.
 */
function embeddingLookup(table: tf.Tensor2D | tf.Variable, ids: tf.Tensor1D): tf.Tensor2D {
  if (tf.getKernel('UnsortedSegmentSum', tf.getBackend()) !== undefined) return tf.gather(table, ids) as tf.Tensor2D;
  // The index tensor must be kept through `save`: tfjs disposes forward-pass tensors the tape did not save.
  const lookup = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const t = args[0] as tf.Tensor;
    (args[1] as tf.GradSaveFunc)([ids]);
    return {
      value: tf.gather(t, ids),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => tf.scatterND(tf.reshape(saved[0]!, [-1, 1]), dy, t.shape),
    };
  });
  return lookup(table) as tf.Tensor2D;
}
