import type { WeightTensor } from '@drmas/core';
import { expectedWeightShapes, type DecoderConfig } from '@drmas/models';
import type { GraphWriter } from './onnx/GraphBuilder.js';

/**
 * How the graphs hold a decoder's weights. `fused`: a derived copy of the projections whose Hugging Face parts share
 * an input, their `[out, in]` rows stacked per layer (`q|k|v`, `gate|up`: one product each, wider products
 * parallelise better at decode batch sizes; `graphWeights`), beside the Hugging Face tensors the trainer updates.
 * `shared`: the Hugging Face tensors themselves, a product per part, so sampling, scoring and training read one
 * float32 copy and no graph derives another per run (`SHARED_LAYOUT_BYTES`). Both keep the weights as `[out, in]`
 * rows, so each product can take the weight on either side (`rowsProduct`).
 */
export const WEIGHT_LAYOUTS = ['fused', 'shared'] as const;
export type WeightLayout = (typeof WEIGHT_LAYOUTS)[number];

/**
 * Float32 weights from which `shared` is the default layout: a model this large (Qwen2.5-0.5B: 1.84 GiB) cannot
 * afford a second copy; below it (the built-in `tiny` and `small`, 0.01 and 0.1 GiB) the fused products are kept.
 */
export const SHARED_LAYOUT_BYTES = 2 ** 29;

/** The layout a model gets unless one is named: `shared` from `SHARED_LAYOUT_BYTES` of float32 weights. */
export function defaultWeightLayout(config: DecoderConfig): WeightLayout {
  let values = 0;
  for (const shape of expectedWeightShapes(config).values()) values += shape.reduce((a, b) => a * b, 1);
  return values * 4 >= SHARED_LAYOUT_BYTES ? 'shared' : 'fused';
}

/** How a graph reads the weights of one layout (`fusedWeights`, `sharedWeights`). */
export interface WeightReader {
  readonly layout: WeightLayout;
  /** A weight used as it is, by graph-weight name (`embed`, `norm`, `input_norm.3`; under `fused` any graph weight). */
  tensor(name: string): string;
  /**
   * `x [tokens, in]` through graph projection `name` (`qkv.3`, `o.3`, `gate_up.3`, `down.3`, `lm_head`) and its
   * bias: the output of each Hugging Face part (q, k and v; gate and up), in order.
   */
  project(x: string, name: string, bias?: string): string[];
  /** Rows `indices` of a graph weight (the embedding), as float32. */
  gather(name: string, indices: string): string;
  /**
   * The output head's `[vocab, hidden]` rows as a chunked head reads them (`writeChunkedScoreHead`): the value as
   * stored and, under float16, the cast that each chunk's slice takes to float32 (so that only one chunk exists as
   * float32 at a time).
   */
  chunkedHead(): { value: string; toFloat?: (x: string) => string };
}

/**
 * How a graph's products take their weights. `wide`: `Gemm(x, W, transB = 1)`, the weight on the right, which
 * onnxruntime's MLAS packs on every run when it is not a constant (an input, as the weights are), a cost that the
 * many rows of a prefill, score or training product amortise. `narrow`: `(W x^T)^T`, the weight on the left, read as
 * stored and only the few columns of `x^T` packed: the decode step, one row per sequence (`npm run bench`: small's
 * decode 1.3-1.6x faster at 32 rows; at 1,024 rows and more the wide form is 15% faster).
 */
export type ProductShape = 'wide' | 'narrow';

/** `x [tokens, in]` times the transpose of weight rows `w [out, in]`, plus `bias [out]` where given. */
export function rowsProduct(g: GraphWriter, x: string, w: string, bias: string | undefined, shape: ProductShape): string {
  const y =
    shape === 'narrow'
      ? g.op('Transpose', [g.op('MatMul', [w, g.op('Transpose', [x], { perm: [1, 0] })])], { perm: [1, 0] })
      : g.op('Gemm', [x, w], { transB: 1 });
  return bias ? g.op('Add', [y, bias]) : y;
}

/**
 * Weights stored in another precision than the graph computes in (float16): `value` gives a graph weight's stored
 * value by the name the reader's lookup takes, `toFloat` casts a value (a whole weight, a gathered row, a slice) to
 * float32 where it is read.
 */
export interface StoredWeights {
  value(name: string): string;
  toFloat(x: string): string;
}

/** Output widths of a graph weight's Hugging Face parts. */
function partWidths(config: DecoderConfig, source: GraphWeightSource): number[] {
  const shapes = expectedWeightShapes(config);
  return source.parts.map((p) => shapes.get(p)![0]!);
}

/**
 * The `fused` layout over graph weights looked up by `w` (inputs or initializers of `graphWeights`, or derived in the
 * graph from the Hugging Face tensors): one product per fused projection, then split into its parts.
 */
export function fusedWeights(
  g: GraphWriter,
  config: DecoderConfig,
  w: (name: string) => string,
  shape: ProductShape = 'wide',
  stored?: StoredWeights,
): WeightReader {
  const sources = graphWeightSources(config);
  return {
    layout: 'fused',
    tensor: w,
    gather: (name, indices) =>
      stored ? stored.toFloat(g.op('Gather', [stored.value(name), indices], { axis: 0 })) : g.op('Gather', [w(name), indices], { axis: 0 }),
    chunkedHead: () => (stored ? { value: stored.value('lm_head'), toFloat: (x) => stored.toFloat(x) } : { value: w('lm_head') }),
    project(x, name, bias) {
      const y = rowsProduct(g, x, w(name), bias && w(bias), shape);
      const widths = partWidths(config, sources.get(name)!);
      return widths.length === 1 ? [y] : g.opMulti('Split', [y, g.ints(widths)], { axis: -1 }, { outputs: widths.length });
    },
  };
}

/**
 * The `shared` layout over the Hugging Face tensors looked up by `hf`: a product per part on its `[out, in]` rows,
 * its bias added; the embedding, norms and head read in place.
 */
export function sharedWeights(
  g: GraphWriter,
  config: DecoderConfig,
  hf: (name: string) => string,
  shape: ProductShape = 'wide',
  stored?: StoredWeights,
): WeightReader {
  const sources = graphWeightSources(config);
  const source = (name: string): GraphWeightSource => {
    const found = sources.get(name);
    if (!found) throw new Error(`no graph weight '${name}'`);
    return found;
  };
  const head = source('lm_head').parts[0]!;
  return {
    layout: 'shared',
    tensor: (name) => hf(source(name).parts[0]!),
    gather: (name, indices) => {
      const table = source(name).parts[0]!;
      return stored
        ? stored.toFloat(g.op('Gather', [stored.value(table), indices], { axis: 0 }))
        : g.op('Gather', [hf(table), indices], { axis: 0 });
    },
    // Under float16 a lookup writes a cast: the head's is written where it is read.
    chunkedHead: () => (stored ? { value: stored.value(head), toFloat: (x) => stored.toFloat(x) } : { value: hf(head) }),
    project(x, name, bias) {
      const biases = bias ? source(bias).parts : [];
      return source(name).parts.map((part, k) => rowsProduct(g, x, hf(part), biases[k] && hf(biases[k]), shape));
    },
  };
}

/**
 * How one graph weight derives from Hugging Face tensors: `parts` stacked along their first axis (a projection's
 * `[out, in]` rows, a bias's values), or passed through where there is one part (norms, the embedding, the head, a
 * projection of its own).
 */
export interface GraphWeightSource {
  parts: string[];
}

/**
 * The graph weights of a decoder and their Hugging Face sources: `q|k|v` and `gate|up` stacked per layer (fewer,
 * wider products parallelise better at decode batch sizes); everything else passed through.
 */
export function graphWeightSources(config: DecoderConfig): Map<string, GraphWeightSource> {
  const c = config;
  const out = new Map<string, GraphWeightSource>();
  const of = (...parts: string[]) => ({ parts });
  out.set('embed', of('model.embed_tokens.weight'));
  out.set('lm_head', of(c.tieWordEmbeddings ? 'model.embed_tokens.weight' : 'lm_head.weight'));
  out.set('norm', of('model.norm.weight'));
  for (let i = 0; i < c.numLayers; i++) {
    const p = `model.layers.${i}`;
    const a = `${p}.self_attn`;
    const qkv = ['q_proj', 'k_proj', 'v_proj'];
    out.set(`input_norm.${i}`, of(`${p}.input_layernorm.weight`));
    out.set(`post_norm.${i}`, of(`${p}.post_attention_layernorm.weight`));
    out.set(`qkv.${i}`, of(...qkv.map((n) => `${a}.${n}.weight`)));
    if (c.qkvBias) out.set(`qkv_bias.${i}`, of(...qkv.map((n) => `${a}.${n}.bias`)));
    out.set(`o.${i}`, of(`${a}.o_proj.weight`));
    if (c.outputBias) out.set(`o_bias.${i}`, of(`${a}.o_proj.bias`));
    if (c.qkNorm) {
      out.set(`q_norm.${i}`, of(`${a}.q_norm.weight`));
      out.set(`k_norm.${i}`, of(`${a}.k_norm.weight`));
    }
    out.set(`gate_up.${i}`, of(`${p}.mlp.gate_proj.weight`, `${p}.mlp.up_proj.weight`));
    if (c.mlpBias) out.set(`gate_up_bias.${i}`, of(`${p}.mlp.gate_proj.bias`, `${p}.mlp.up_proj.bias`));
    out.set(`down.${i}`, of(`${p}.mlp.down_proj.weight`));
    if (c.mlpBias) out.set(`down_bias.${i}`, of(`${p}.mlp.down_proj.bias`));
  }
  return out;
}

/**
 * The weights as the graphs take them (`graphWeightSources`): a weight of one part is the Hugging Face tensor itself
 * (its buffer, so it is current after any update), one of several a stacked copy.
 */
export function graphWeights(config: DecoderConfig, hf: Map<string, WeightTensor>): Map<string, WeightTensor> {
  const out = new Map<string, WeightTensor>();
  for (const [name, source] of graphWeightSources(config)) {
    const parts = source.parts.map((p) => hf.get(p)!);
    out.set(name, parts.length === 1 ? parts[0]! : stack(parts));
  }
  return out;
}

/**
 * Writes the stacked graph weights of `graph`, made by `graphWeights` from `hf`, again from `hf`'s current values
 * into their own buffers (the feeds that hold them stay valid). What a trainer on `hf` calls after each update.
 */
export function refreshGraphWeights(config: DecoderConfig, hf: Map<string, WeightTensor>, graph: Map<string, WeightTensor>): void {
  for (const [name, source] of graphWeightSources(config)) {
    if (source.parts.length > 1)
      stack(
        source.parts.map((p) => hf.get(p)!),
        graph.get(name)!.data,
      );
  }
}

/** Tensors that agree past their first axis, stacked along it (into `into` when given). */
function stack(parts: WeightTensor[], into?: Float32Array): WeightTensor {
  const data = into ?? new Float32Array(parts.reduce((s, p) => s + p.data.length, 0));
  let offset = 0;
  for (const p of parts) {
    data.set(p.data, offset);
    offset += p.data.length;
  }
  const [, ...rest] = parts[0]!.shape;
  return { shape: [parts.reduce((s, p) => s + p.shape[0]!, 0), ...rest], data };
}
