import type { WeightTensor } from '@drmas/core';
import type { DecoderConfig } from '@drmas/models';

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
