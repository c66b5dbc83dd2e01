import type { WeightTensor } from '@drmas/core';
import { expectedWeightShapes, type DecoderConfig } from '@drmas/models';
import type { GraphWriter } from './onnx/GraphBuilder.js';

/**
 * How the graphs hold a decoder's weights. `fused`: a derived copy of every projection, transposed to `[in, out]` and
 * fused per layer (`graphWeights`), beside the Hugging Face tensors the trainer updates. `shared`: the Hugging Face
 * tensors themselves, each projection a `Gemm` with `transB` on its `[out, in]` rows, so sampling, scoring and
 * training read one float32 copy and no graph derives another per run (`SHARED_LAYOUT_BYTES`).
 */
export const WEIGHT_LAYOUTS = ['fused', 'shared'] as const;
export type WeightLayout = (typeof WEIGHT_LAYOUTS)[number];

/**
 * Float32 weights from which `shared` is the default layout: a model this large (Qwen2.5-0.5B: 1.84 GiB) cannot
 * afford a second copy; below it (the built-in `tiny` and `small`, 0.01 and 0.1 GiB) the fused products are kept, as
 * every earlier run computed them (bitwise).
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
  /** The output head as `[vocab, hidden]` rows (the Hugging Face tensor) where the graph has it. */
  readonly headRows?: string;
  /** Rows `indices` of a graph weight (the embedding), as float32. */
  gather(name: string, indices: string): string;
  /**
   * The output head as a chunked head reads it (`writeChunkedScoreHead`): its value as stored, its layout, and under
   * float16 the cast that each chunk's slice takes to float32 (so that only one chunk exists as float32 at a time).
   */
  chunkedHead(): { value: string; layout: 'rows' | 'columns'; toFloat?: (x: string) => string };
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
 * graph from the Hugging Face tensors): one MatMul per fused projection, then split into its parts.
 */
export function fusedWeights(
  g: GraphWriter,
  config: DecoderConfig,
  w: (name: string) => string,
  headRows?: string,
  stored?: StoredWeights,
): WeightReader {
  const sources = graphWeightSources(config);
  return {
    layout: 'fused',
    tensor: w,
    headRows,
    gather: (name, indices) =>
      stored ? stored.toFloat(g.op('Gather', [stored.value(name), indices], { axis: 0 })) : g.op('Gather', [w(name), indices], { axis: 0 }),
    chunkedHead: () =>
      headRows
        ? { value: headRows, layout: 'rows' }
        : stored
          ? { value: stored.value('lm_head'), layout: 'columns', toFloat: (x) => stored.toFloat(x) }
          : { value: w('lm_head'), layout: 'columns' },
    project(x, name, bias) {
      const product = g.op('MatMul', [x, w(name)]);
      const y = bias ? g.op('Add', [product, w(bias)]) : product;
      const widths = partWidths(config, sources.get(name)!);
      return widths.length === 1 ? [y] : g.opMulti('Split', [y, g.ints(widths)], { axis: -1 }, { outputs: widths.length });
    },
  };
}

/**
 * The `shared` layout over the Hugging Face tensors looked up by `hf`: each part a `Gemm(x, W, transB = 1)` on its
 * `[out, in]` rows (x `[tokens, in]`), its bias added; the embedding, norms and head read in place.
 */
export function sharedWeights(g: GraphWriter, config: DecoderConfig, hf: (name: string) => string, stored?: StoredWeights): WeightReader {
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
    // Under float16 a lookup writes a cast: the head's is written where it is read.
    get headRows() {
      return hf(head);
    },
    gather: (name, indices) => {
      const table = source(name).parts[0]!;
      return stored
        ? stored.toFloat(g.op('Gather', [stored.value(table), indices], { axis: 0 }))
        : g.op('Gather', [hf(table), indices], { axis: 0 });
    },
    chunkedHead: () =>
      stored ? { value: stored.value(head), layout: 'rows', toFloat: (x) => stored.toFloat(x) } : { value: hf(head), layout: 'rows' },
    project(x, name, bias) {
      const biases = bias ? source(bias).parts : [];
      return source(name).parts.map((part, k) => {
        const y = g.op('Gemm', [x, hf(part)], { transB: 1 });
        return biases[k] ? g.op('Add', [y, hf(biases[k])]) : y;
      });
    },
  };
}

/**
 * How one graph weight derives from Hugging Face tensors: `parts` side by side, each transposed from `[out, in]` to
 * `[in, out]` first when `transpose` (a projection), else concatenated as they are (biases) or passed through (one
 * part: norms, the embedding).
 */
export interface GraphWeightSource {
  parts: string[];
  transpose: boolean;
}

/**
 * The graph weights of a decoder and their Hugging Face sources: projections transposed to `[in, out]` (MatMul
 * packs an untransposed right operand faster) and fused per layer (`q|k|v` and `gate|up` in one product each: fewer,
 * wider products parallelise better at decode batch sizes). Norms and the embedding pass through unchanged.
 */
export function graphWeightSources(config: DecoderConfig): Map<string, GraphWeightSource> {
  const c = config;
  const out = new Map<string, GraphWeightSource>();
  const projection = (...parts: string[]) => ({ parts, transpose: true });
  const plain = (...parts: string[]) => ({ parts, transpose: false });
  out.set('embed', plain('model.embed_tokens.weight'));
  out.set('lm_head', projection(c.tieWordEmbeddings ? 'model.embed_tokens.weight' : 'lm_head.weight'));
  out.set('norm', plain('model.norm.weight'));
  for (let i = 0; i < c.numLayers; i++) {
    const p = `model.layers.${i}`;
    const a = `${p}.self_attn`;
    const qkv = ['q_proj', 'k_proj', 'v_proj'];
    out.set(`input_norm.${i}`, plain(`${p}.input_layernorm.weight`));
    out.set(`post_norm.${i}`, plain(`${p}.post_attention_layernorm.weight`));
    out.set(`qkv.${i}`, projection(...qkv.map((n) => `${a}.${n}.weight`)));
    if (c.qkvBias) out.set(`qkv_bias.${i}`, plain(...qkv.map((n) => `${a}.${n}.bias`)));
    out.set(`o.${i}`, projection(`${a}.o_proj.weight`));
    if (c.outputBias) out.set(`o_bias.${i}`, plain(`${a}.o_proj.bias`));
    if (c.qkNorm) {
      out.set(`q_norm.${i}`, plain(`${a}.q_norm.weight`));
      out.set(`k_norm.${i}`, plain(`${a}.k_norm.weight`));
    }
    out.set(`gate_up.${i}`, projection(`${p}.mlp.gate_proj.weight`, `${p}.mlp.up_proj.weight`));
    if (c.mlpBias) out.set(`gate_up_bias.${i}`, plain(`${p}.mlp.gate_proj.bias`, `${p}.mlp.up_proj.bias`));
    out.set(`down.${i}`, projection(`${p}.mlp.down_proj.weight`));
    if (c.mlpBias) out.set(`down_bias.${i}`, plain(`${p}.mlp.down_proj.bias`));
  }
  return out;
}

/** The weights as the graphs take them (`graphWeightSources`), derived from the Hugging Face tensors. */
export function graphWeights(config: DecoderConfig, hf: Map<string, WeightTensor>): Map<string, WeightTensor> {
  const out = new Map<string, WeightTensor>();
  for (const [name, source] of graphWeightSources(config)) {
    const parts = source.parts.map((p) => hf.get(p)!);
    out.set(name, source.transpose ? transposeConcat(parts) : parts.length === 1 ? parts[0]! : concat(parts));
  }
  return out;
}

/**
 * Writes the derived graph weights (transposed or fused) of `graph`, made by `graphWeights` from `hf`, again from
 * `hf`'s current values into their own buffers (the feeds that hold them stay valid); the weights passed through are
 * `hf`'s own buffers, current already. What a trainer on `hf` calls after each update.
 */
export function refreshGraphWeights(config: DecoderConfig, hf: Map<string, WeightTensor>, graph: Map<string, WeightTensor>): void {
  for (const [name, source] of graphWeightSources(config)) {
    const parts = source.parts.map((p) => hf.get(p)!);
    const target = graph.get(name)!;
    if (source.transpose) transposeConcat(parts, target.data);
    else if (parts.length > 1) concat(parts, target.data);
  }
}

/**
 * `[out_k, in]` matrices -> one `[in, sum(out_k)]` matrix (transposed, side by side), into `data` when given. At
 * least one part; the shapes were checked against the config (`checkedWeights`).
 */
function transposeConcat(parts: WeightTensor[], into?: Float32Array): WeightTensor {
  const rows = parts[0]!.shape[1]!;
  const columns = parts.reduce((s, p) => s + p.shape[0]!, 0);
  const data = into ?? new Float32Array(rows * columns);
  const tile = 32;
  let offset = 0;
  for (const part of parts) {
    const outs = part.shape[0]!;
    const ins = part.shape[1]!;
    const src = part.data;
    for (let o0 = 0; o0 < outs; o0 += tile) {
      for (let i0 = 0; i0 < ins; i0 += tile) {
        const oEnd = Math.min(o0 + tile, outs);
        const iEnd = Math.min(i0 + tile, ins);
        for (let o = o0; o < oEnd; o++) {
          const row = o * ins;
          for (let i = i0; i < iEnd; i++) data[i * columns + offset + o] = src[row + i]!;
        }
      }
    }
    offset += outs;
  }
  return { shape: [rows, columns], data };
}

function concat(parts: WeightTensor[], into?: Float32Array): WeightTensor {
  const data = into ?? new Float32Array(parts.reduce((s, p) => s + p.data.length, 0));
  let offset = 0;
  for (const p of parts) {
    data.set(p.data, offset);
    offset += p.data.length;
  }
  return { shape: [data.length], data };
}
