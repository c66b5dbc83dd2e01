import { describe, expect, it } from '@jest/globals';
import { DrmasError, scoreSequences, type RunContext } from '@drmas/core';
import { decodeBf16, decodeF16, encodeBf16, expectedWeightShapes, type HostTensor } from '@drmas/models';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import onnxBackendPlugin, {
  createOnnxBackendFactory,
  Float16OverflowError,
  OnnxPolicyBackend,
  referencePrecision,
  toFloat16,
} from '../src/index.js';
import { maxAbsDiff, randomWeights, tinyConfigJson } from './parityFixtures.js';
import { TEST_BUDGET } from './engineRun.js';

const bits = (values: number[]) => toFloat16('w', { shape: [values.length], data: Float32Array.from(values) }).data;

describe('float32 -> float16 (toFloat16)', () => {
  it('rounds to nearest with ties to even, hand-worked', () => {
    // float16 has 10 fraction bits: between 1 and 2 its spacing is 2^-10.
    const ulp = 2 ** -10;
    expect([...bits([1, 1 + ulp, 1 + ulp / 2, 1 + 1.5 * ulp, 1 + ulp / 2 + 2 ** -20, -2, 65504, 0.1])]).toEqual([
      0x3c00, // 1
      0x3c01, // 1 + 2^-10
      0x3c00, // a tie: to the even 1
      0x3c02, // a tie: to the even 1 + 2^-9
      0x3c01, // above the tie: up
      0xc000, // -2
      0x7bff, // the largest finite
      0x2e66, // 0.1 = 0x3DCCCCCD: fraction 0x4CCCCD >> 13 = 0x266, rest 0xCCD < 0x1000: down
    ]);
  });

  it('subnormals: multiples of 2^-24, ties to even, and zero below half of 2^-24', () => {
    const u = 2 ** -24;
    expect([...bits([u, 3 * u, 2.5 * u, 3.5 * u, 0.5 * u, 0.51 * u, 2 ** -15, 2 ** -14, -u])]).toEqual([
      0x0001, 0x0003, 0x0002, 0x0004, 0x0000, 0x0001, 0x0200, 0x0400, 0x8001,
    ]);
  });

  it('refuses a value that would round to infinity, naming the tensor, index and value', () => {
    // 65519.99 rounds to 65504; 65520 is the tie between 65504 (odd fraction 0x3ff) and 2^16: to even, infinity.
    expect([...bits([65519.99])]).toEqual([0x7bff]);
    const overflow = () => toFloat16('model.layers.3.mlp.down_proj.weight', { shape: [2], data: Float32Array.of(1, -65520) });
    expect(overflow).toThrow(Float16OverflowError);
    expect(overflow).toThrow("weight model.layers.3.mlp.down_proj.weight holds -65520 at index 1, beyond float16's range (+-65504)");
    try {
      overflow();
    } catch (error) {
      expect(DrmasError.is(error) && error.hint).toContain('float32');
    }
  });

  it('a bfloat16 checkpoint value (read as float32) converts exactly from 2^-14 to 65504, within 2^-25 below', () => {
    const every = new Uint16Array(65536).map((_, i) => i);
    const values = decodeBf16(every);
    const inRange = values.filter((v) => Number.isFinite(v) && Math.abs(v) <= 65504);
    const back = decodeF16(toFloat16('bf16', { shape: [inRange.length], data: inRange }).data);
    let normals = 0;
    let inexactNormals = 0;
    let subnormalError = 0;
    for (let i = 0; i < inRange.length; i++) {
      const v = inRange[i]!;
      if (Math.abs(v) >= 2 ** -14) {
        normals++;
        if (back[i] !== v) inexactNormals++;
      } else {
        subnormalError = Math.max(subnormalError, Math.abs(back[i]! - v));
      }
    }
    expect(inexactNormals).toBe(0);
    expect(subnormalError).toBeGreaterThan(0);
    expect(subnormalError).toBeLessThanOrEqual(2 ** -25);
    // Exponents -14..15: 30 binades of 128 bfloat16 values (the largest 65280 <= 65504), both signs.
    expect(normals).toBe(2 * 30 * 128);
  });
});

/** Copies of `weights` with every value rounded to float16 and back: what the float16 engine computes with. */
function roundedToHalf(weights: Map<string, HostTensor>): Map<string, HostTensor> {
  return new Map([...weights].map(([name, w]) => [name, { shape: w.shape, data: decodeF16(toFloat16(name, w).data) }]));
}

function roundedToBf16(weights: Map<string, HostTensor>): Map<string, HostTensor> {
  return new Map([...weights].map(([name, w]) => [name, { shape: w.shape, data: decodeBf16(encodeBf16(w.data)) }]));
}

const PROMPTS = [
  [5, 60, 7, 81, 9, 3, 44],
  [12, 19_999, 18_000],
  [30, 4, 11, 2, 19],
  [100, 101],
];
const RESPONSES = [[1, 2, 3], [17_000, 5], [9, 9, 9, 9], [19_998]];

describe('an engine holding its weights in float16', () => {
  // Qwen2 with tied embeddings and a vocabulary above HEAD_VOCAB_CHUNK: the chunked head casts each chunk's rows.
  const made = randomWeights(tinyConfigJson('Qwen2ForCausalLM', { tie_word_embeddings: true, vocab_size: 20_000 }), 7);
  const create = (weights: Map<string, HostTensor>, precision: 'float32' | 'float16', weightLayout: 'shared' | 'fused') =>
    OnnxPolicyBackend.create(made.config, weights, undefined, {
      provider: 'cpu',
      weightLayout,
      weightPrecision: precision,
      sessionOptions: { intraOpNumThreads: 1 },
    });
  const values = [...made.weights.values()].reduce((s, w) => s + w.data.length, 0);
  // Under `fused` float32 graphs read q|k|v and gate|up stacked in a copy (biases too); everything else in place.
  const stacked = [...made.weights]
    .filter(([name]) => /\.(q_proj|k_proj|v_proj|gate_proj|up_proj)\./.test(name))
    .reduce((s, [, w]) => s + w.data.length, 0);
  const graphValues = { shared: values, fused: values + stacked };

  it.each(['shared', 'fused'] as const)(
    'scores as the float32 engine on the float16-rounded weights (the casts are exact), holding 2 bytes a weight (%s layout)',
    async (layout) => {
      const half = await create(made.weights, 'float16', layout);
      const rounded = await create(roundedToHalf(made.weights), 'float32', layout);
      const exact = await create(made.weights, 'float32', layout);
      const bf16 = await create(roundedToBf16(made.weights), 'float32', layout);
      const [h, r, e, b] = [
        await scoreSequences(half, PROMPTS, RESPONSES),
        await scoreSequences(rounded, PROMPTS, RESPONSES),
        await scoreSequences(exact, PROMPTS, RESPONSES),
        await scoreSequences(bf16, PROMPTS, RESPONSES),
      ];
      // float16 -> float32 is exact: the same values through the same float32 graph (one thread), bitwise.
      expect(h.logProbs).toEqual(r.logProbs);
      // Against the unrounded weights, the drift is first order in the rounding's relative error, 2^-11 for float16,
      // 2^-8 for bfloat16: about 1/8 of bfloat16's drift (1/4 allowed for the max over 13 tokens), never 0.
      const drift = maxAbsDiff(h.logProbs, e.logProbs);
      const bf16Drift = maxAbsDiff(b.logProbs, e.logProbs);
      expect(drift).toBeGreaterThan(0);
      expect(drift).toBeLessThan(bf16Drift / 4);
      expect(half.weightPrecision).toBe('float16');
      // float16: one copy of what the graphs read (the stacked projections in place of their parts).
      expect(half.weightBytes).toBe(2 * values);
      // float32: the weights, and under `fused` the stacked copy besides.
      expect(exact.weightBytes).toBe(4 * graphValues[layout]);
      for (const engine of [half, rounded, exact, bf16]) engine.dispose();
    },
  );

  it('samples, and refuses to train, save, load or hand out weights, naming what to do', async () => {
    const half = await create(made.weights, 'float16', 'shared');
    const rounded = await create(roundedToHalf(made.weights), 'float32', 'shared');
    const request = { prompts: PROMPTS, maxNewTokens: 5, temperature: 0, stopTokenIds: [] };
    expect((await half.generate(request)).tokenIds).toEqual((await rounded.generate(request)).tokenIds);
    await expect(half.save('/tmp/never')).rejects.toThrow(
      `engine ${half.name} holds its weights in float16 and is frozen: it cannot save a checkpoint`,
    );
    await expect(half.exportWeights()).rejects.toThrow('cannot export float32 weights');
    await expect(half.syncWeights(rounded)).rejects.toThrow('cannot take weights (syncWeights)');
    expect(half.sharedTrunk()).toBeUndefined();
    half.dispose();
    rounded.dispose();
  });

  it('refuses float16 with weights as initializers or under LoRA', async () => {
    await expect(
      OnnxPolicyBackend.create(made.config, made.weights, undefined, {
        provider: 'cpu',
        weightPrecision: 'float16',
        weightMode: 'initializers',
      }),
    ).rejects.toThrow("float16 weights need weightMode 'inputs' and no LoRA adapter");
  });
});

describe('a reference model on the onnx factory', () => {
  it('is float16 by default from 512 MiB of float32 weights (Qwen2.5-0.5B), float32 below (tiny, small), as set otherwise', () => {
    const dir = mkdtempSync(join(tmpdir(), 'drmas-reference-'));
    try {
      // Qwen2.5-0.5B's published config.json, the fields a model's shape is read from.
      const qwen = { ...tinyConfigJson('Qwen2ForCausalLM'), vocab_size: 151_936, hidden_size: 896, intermediate_size: 4864 };
      writeFileSync(
        join(dir, 'config.json'),
        JSON.stringify({ ...qwen, num_hidden_layers: 24, num_attention_heads: 14, tie_word_embeddings: true }),
      );
      expect(referencePrecision({ model: dir })).toBe('float16');
      expect(referencePrecision({ model: dir, referencePrecision: 'float32' })).toBe('float32');
      expect(referencePrecision({ model: 'small' })).toBe('float32');
      expect(referencePrecision({ model: 'tiny', referencePrecision: 'float16' })).toBe('float16');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const schema = onnxBackendPlugin().configSchema.models;
    expect(schema.safeParse({ referencePrecision: 'bfloat16' }).success).toBe(false);
  });

  it('creates a policy in float32 whatever referencePrecision says, a reference in it, a LoRA reference on the shared base in float32', async () => {
    const factory = createOnnxBackendFactory();
    const run = { log: () => {}, memoryBudget: TEST_BUDGET } as unknown as RunContext;
    const settings = { model: 'tiny', seed: 5, provider: 'cpu', threads: 1, referencePrecision: 'float16' };
    const policy = (await factory.create({ modelId: 'm', settings, run })) as OnnxPolicyBackend;
    const reference = (await factory.create({ modelId: 'm', settings, run, purpose: 'reference' })) as OnnxPolicyBackend;
    const lora = { agent: 'a', rank: 2, alpha: 4, dropout: 0, targetModules: ['q_proj'] };
    const loraReference = (await factory.create({
      modelId: 'm',
      settings: { ...settings, lora },
      run,
      purpose: 'reference',
    })) as OnnxPolicyBackend;
    expect([policy.weightPrecision, reference.weightPrecision, loraReference.weightPrecision]).toEqual(['float32', 'float16', 'float32']);
    // The float16 reference holds 2 bytes a weight.
    const values = [...expectedWeightShapes(policy.config).values()].reduce((s, shape) => s + shape.reduce((a, b) => a * b, 1), 0);
    expect(reference.weightBytes).toBe(2 * values);
    for (const engine of [policy, reference, loraReference]) engine.dispose();
  });
});
