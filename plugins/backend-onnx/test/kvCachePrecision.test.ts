import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RunContext, WeightTensor } from '@drmas/core';
import { decodeF16, type DecoderConfig } from '@drmas/models';
import { createOnnxBackendFactory, createOnnxPolicyBackend, toFloat16, type OnnxPolicyBackend } from '../src/index.js';
import { TEST_BUDGET } from './engineRun.js';

const PROMPTS = [
  [5, 60, 7, 81, 9, 3, 44],
  [12, 30, 4],
];
// Past the first 32 cache slots beyond the prompt, so that the caches widen in place once (`OnnxSampler`).
const NEW_TOKENS = 40;
// Row 0's 4th greedy token under either cache, which row 1 never samples: row 0 stops there and row 1's caches move
// into its place.
const STOP = 290;

/** float32 values rounded to float16 and back, as a float16 cache holds them. */
const toHalf = (values: number[]): number[] => [
  ...decodeF16(toFloat16('cache', { shape: [values.length], data: Float32Array.from(values) }).data),
];

/**
 * Temperature-1 log-probs of `generated` after `prompt` by a float64 decoder of transformers' Llama / Qwen2 semantics
 * (no biases, untied head), token by token as `generate` computes them: the first from the prompt's own keys and
 * values, each later one attending to the cached keys (after rope) and values of every earlier position passed
 * through `cached`, and to its own as computed.
 */
function referenceLogProbs(
  config: DecoderConfig,
  weights: Map<string, WeightTensor>,
  prompt: number[],
  generated: number[],
  cached: (values: number[]) => number[],
): number[] {
  const { hiddenSize: h, numHeads, numKvHeads, headDim: d, numLayers, intermediateSize, vocabSize, rmsNormEps, ropeTheta } = config;
  const w = (name: string): Float32Array => {
    const t = weights.get(name);
    if (!t) throw new Error(`no weight ${name}`);
    return t.data;
  };
  const matVec = (m: Float32Array, x: number[], rows: number): number[] =>
    Array.from({ length: rows }, (_, r) => x.reduce((s, v, c) => s + m[r * x.length + c]! * v, 0));
  const rmsNorm = (x: number[], weight: Float32Array): number[] => {
    const scale = 1 / Math.sqrt(x.reduce((s, v) => s + v * v, 0) / x.length + rmsNormEps);
    return x.map((v, i) => v * scale * weight[i]!);
  };
  const rope = (x: number[], position: number): number[] => {
    const out = x.slice();
    for (let head = 0; head < x.length / d; head++) {
      for (let i = 0; i < d / 2; i++) {
        const angle = position * ropeTheta ** (-(2 * i) / d);
        const [a, b] = [x[head * d + i]!, x[head * d + i + d / 2]!];
        out[head * d + i] = a * Math.cos(angle) - b * Math.sin(angle);
        out[head * d + i + d / 2] = b * Math.cos(angle) + a * Math.sin(angle);
      }
    }
    return out;
  };
  const tokens = [...prompt, ...generated];
  // Per layer, per position: the keys and values as computed and as the cache holds them.
  const keys = Array.from({ length: numLayers }, () => [] as Array<{ own: number[]; held: number[] }>);
  const values = Array.from({ length: numLayers }, () => [] as Array<{ own: number[]; held: number[] }>);
  const logProbs: number[] = [];
  for (let p = 0; p < tokens.length - 1; p++) {
    // Positions of the prompt attend to each other as computed (the prefill); a decoded one to the cache.
    const decoding = p >= prompt.length;
    const embed = w('model.embed_tokens.weight');
    let x = Array.from(embed.subarray(tokens[p]! * h, (tokens[p]! + 1) * h));
    for (let l = 0; l < numLayers; l++) {
      const pre = `model.layers.${l}.`;
      const normed = rmsNorm(x, w(`${pre}input_layernorm.weight`));
      const q = rope(matVec(w(`${pre}self_attn.q_proj.weight`), normed, numHeads * d), p);
      const k = rope(matVec(w(`${pre}self_attn.k_proj.weight`), normed, numKvHeads * d), p);
      const v = matVec(w(`${pre}self_attn.v_proj.weight`), normed, numKvHeads * d);
      keys[l]!.push({ own: k, held: cached(k) });
      values[l]!.push({ own: v, held: cached(v) });
      const context: number[] = [];
      for (let head = 0; head < numHeads; head++) {
        const kv = Math.floor(head / (numHeads / numKvHeads));
        const seen = (j: number, entry: { own: number[]; held: number[] }) => (decoding && j < p ? entry.held : entry.own);
        const scores = keys[l]!.map((entry, j) => {
          const key = seen(j, entry);
          let s = 0;
          for (let e = 0; e < d; e++) s += q[head * d + e]! * key[kv * d + e]!;
          return s / Math.sqrt(d);
        });
        const max = Math.max(...scores);
        const weightsOf = scores.map((s) => Math.exp(s - max));
        const total = weightsOf.reduce((a, b) => a + b, 0);
        for (let e = 0; e < d; e++) {
          context.push(values[l]!.reduce((s, entry, j) => s + (weightsOf[j]! / total) * seen(j, entry)[kv * d + e]!, 0));
        }
      }
      const attended = matVec(w(`${pre}self_attn.o_proj.weight`), context, h);
      x = x.map((v0, i) => v0 + attended[i]!);
      const post = rmsNorm(x, w(`${pre}post_attention_layernorm.weight`));
      const gate = matVec(w(`${pre}mlp.gate_proj.weight`), post, intermediateSize);
      const up = matVec(w(`${pre}mlp.up_proj.weight`), post, intermediateSize);
      const act = gate.map((g, i) => (g / (1 + Math.exp(-g))) * up[i]!);
      const down = matVec(w(`${pre}mlp.down_proj.weight`), act, h);
      x = x.map((v0, i) => v0 + down[i]!);
    }
    if (p < prompt.length - 1) continue;
    const logits = matVec(w('lm_head.weight'), rmsNorm(x, w('model.norm.weight')), vocabSize);
    const max = Math.max(...logits);
    const logTotal = Math.log(logits.reduce((s, l) => s + Math.exp(l - max), 0));
    logProbs.push(logits[tokens[p + 1]!]! - max - logTotal);
  }
  return logProbs;
}

const largestDiff = (a: number[], b: number[]): number => Math.max(...a.map((v, i) => Math.abs(v - b[i]!)));

describe('kvCachePrecision: the sampler key/value caches in float16', () => {
  let full: OnnxPolicyBackend;
  let half: OnnxPolicyBackend;
  beforeAll(async () => {
    full = await createOnnxPolicyBackend({ model: 'tiny', seed: 3, provider: 'cpu' });
    half = await createOnnxPolicyBackend({ model: 'tiny', seed: 3, provider: 'cpu', kvCachePrecision: 'float16' });
  });
  afterAll(() => {
    full.dispose();
    half.dispose();
  });

  it("samples as a float64 decoder whose cache rounds each past key and value to float16; float32's does not", async () => {
    const weights = await full.exportWeights();
    const request = { prompts: PROMPTS, maxNewTokens: NEW_TOKENS, temperature: 0, stopTokenIds: [STOP] };
    const [a, b] = [await full.generate(request), await half.generate(request)];
    for (let r = 0; r < PROMPTS.length; r++) {
      const exact = referenceLogProbs(full.config, weights, PROMPTS[r]!, a.tokenIds[r]!, (x) => x);
      expect(largestDiff(a.logProbs[r]!, exact)).toBeLessThan(5e-6);
      const rounded = referenceLogProbs(full.config, weights, PROMPTS[r]!, b.tokenIds[r]!, toHalf);
      const unrounded = referenceLogProbs(full.config, weights, PROMPTS[r]!, b.tokenIds[r]!, (x) => x);
      // Measured 4e-6 and 6e-6 from the rounded cache's log-probs, 8e-5 and 5e-5 from the unrounded one's: the
      // float16 cache's log-probs are those of the rounded cache, not within float32's error of the unrounded one.
      expect(largestDiff(b.logProbs[r]!, rounded)).toBeLessThan(2e-5);
      expect(largestDiff(b.logProbs[r]!, unrounded)).toBeGreaterThan(4 * largestDiff(b.logProbs[r]!, rounded));
      // The first token comes from the prompt's prefill, before any cached value is read.
      expect(Math.abs(b.logProbs[r]![0]! - a.logProbs[r]![0]!)).toBeLessThan(1e-6);
    }
  }, 60_000);
});

describe('models.<id>.kvCachePrecision', () => {
  it("reaches the engine the factory creates: its samples are the float16 engine's, bit for bit", async () => {
    const factory = createOnnxBackendFactory();
    const run = { log: () => {}, memoryBudget: TEST_BUDGET } as unknown as RunContext;
    const made = (kvCachePrecision?: string) =>
      factory.create({
        modelId: 'm',
        settings: { model: 'tiny', seed: 3, provider: 'cpu', ...(kvCachePrecision && { kvCachePrecision }) },
        run,
      });
    const [plain, half] = (await Promise.all([made(), made('float16')])) as OnnxPolicyBackend[];
    const direct = await createOnnxPolicyBackend({ model: 'tiny', seed: 3, provider: 'cpu', kvCachePrecision: 'float16' });
    expect([plain!.kvCachePrecision, half!.kvCachePrecision]).toEqual(['float32', 'float16']);
    const request = { prompts: PROMPTS, maxNewTokens: 8, temperature: 0, stopTokenIds: [] };
    const [a, b, c] = [await plain!.generate(request), await half!.generate(request), await direct.generate(request)];
    expect(b.logProbs).toEqual(c.logProbs);
    expect(largestDiff(a.logProbs[0]!, b.logProbs[0]!)).toBeGreaterThan(0);
    for (const engine of [plain!, half!, direct]) engine.dispose();
  });
});

describe('the memory a sampled token holds (cacheBytesPerToken)', () => {
  it('halves under float16: keys and values of every layer, hand-worked for tiny', () => {
    const factory = createOnnxBackendFactory();
    // tiny: 4 layers x 2 KV heads x head_dim 64, a key and a value each.
    expect(factory.cacheBytesPerToken!({ model: 'tiny' })?.bytes).toBe(2 * 4 * 2 * 64 * 4);
    expect(factory.cacheBytesPerToken!({ model: 'tiny', kvCachePrecision: 'float16' })?.bytes).toBe(2 * 4 * 2 * 64 * 2);
  });
});
