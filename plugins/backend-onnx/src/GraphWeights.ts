import type { WeightTensor } from '@drmas/core';
import type { DecoderConfig } from '@drmas/models';

/**
 * The weights as the graphs take them, derived from the Hugging Face tensors: projections transposed to
 * `[in, out]` (MatMul packs an untransposed right operand faster) and fused per layer (`q|k|v` and `gate|up` in
 * one product each: fewer, wider products parallelise better at decode batch sizes). Norms and the embedding
 * pass through unchanged (shared, not copied).
 */
export function graphWeights(config: DecoderConfig, hf: Map<string, WeightTensor>): Map<string, WeightTensor> {
  const c = config;
  const out = new Map<string, WeightTensor>();
  const get = (name: string): WeightTensor => hf.get(name)!;
  out.set('embed', get('model.embed_tokens.weight'));
  out.set('lm_head', transposeConcat([get(c.tieWordEmbeddings ? 'model.embed_tokens.weight' : 'lm_head.weight')]));
  out.set('norm', get('model.norm.weight'));
  for (let i = 0; i < c.numLayers; i++) {
    const p = `model.layers.${i}`;
    const a = `${p}.self_attn`;
    out.set(`input_norm.${i}`, get(`${p}.input_layernorm.weight`));
    out.set(`post_norm.${i}`, get(`${p}.post_attention_layernorm.weight`));
    out.set(`qkv.${i}`, transposeConcat(['q_proj', 'k_proj', 'v_proj'].map((n) => get(`${a}.${n}.weight`))));
    if (c.qkvBias) out.set(`qkv_bias.${i}`, concat(['q_proj', 'k_proj', 'v_proj'].map((n) => get(`${a}.${n}.bias`))));
    out.set(`o.${i}`, transposeConcat([get(`${a}.o_proj.weight`)]));
    if (c.outputBias) out.set(`o_bias.${i}`, get(`${a}.o_proj.bias`));
    if (c.qkNorm) {
      out.set(`q_norm.${i}`, get(`${a}.q_norm.weight`));
      out.set(`k_norm.${i}`, get(`${a}.k_norm.weight`));
    }
    out.set(`gate_up.${i}`, transposeConcat([get(`${p}.mlp.gate_proj.weight`), get(`${p}.mlp.up_proj.weight`)]));
    if (c.mlpBias) out.set(`gate_up_bias.${i}`, concat([get(`${p}.mlp.gate_proj.bias`), get(`${p}.mlp.up_proj.bias`)]));
    out.set(`down.${i}`, transposeConcat([get(`${p}.mlp.down_proj.weight`)]));
    if (c.mlpBias) out.set(`down_bias.${i}`, get(`${p}.mlp.down_proj.bias`));
  }
  return out;
}

/**
 * `[out_k, in]` matrices -> one `[in, sum(out_k)]` matrix (transposed, side by side). At least one part; the shapes
 * were checked against the config (`checkedWeights`).
 */
function transposeConcat(parts: WeightTensor[]): WeightTensor {
  const rows = parts[0]!.shape[1]!;
  const columns = parts.reduce((s, p) => s + p.shape[0]!, 0);
  const data = new Float32Array(rows * columns);
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

function concat(parts: WeightTensor[]): WeightTensor {
  const data = new Float32Array(parts.reduce((s, p) => s + p.data.length, 0));
  let offset = 0;
  for (const p of parts) {
    data.set(p.data, offset);
    offset += p.data.length;
  }
  return { shape: [data.length], data };
}
