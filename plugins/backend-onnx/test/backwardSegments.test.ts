import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { lossTotals, TrainingBatch, type BatchView, type WeightTensor } from '@drmas/core';
import { initLoraAdapter, SeededRandom, type DecoderConfig } from '@drmas/models';
import { backwardSegments } from '../src/training/LargeModelMemory.js';
import { OnnxTrainer, type OnnxTrainerOptions } from '../src/training/OnnxTrainer.js';
import { centralDifference, randomWeights, relativeError, tinyConfigJson, weightedLikelihoodWithEntropy } from './parityFixtures.js';

/**
 * A segmented backward (`backwardSegments`): each segment of layers trained from the gradient of its output that the
 * segment above returns gives the gradients, loss and metrics of the model in one graph, on a 4-layer Qwen3 with tied
 * embeddings whose head goes in vocabulary chunks (its gradient in blocks in the top segment, the embedding's rows in
 * the bottom one), over accumulating micro-batches, and on a LoRA adapter; a lower layer's gradient also against
 * central finite differences.
 */
const loss = weightedLikelihoodWithEntropy;

describe('backwardSegments: the layer ranges', () => {
  const llama32_1b = {
    numLayers: 16,
    numHeads: 32,
    numKvHeads: 8,
    headDim: 64,
    hiddenSize: 2048,
    intermediateSize: 8192,
    vocabSize: 128_256,
  };

  it('splits the layers into a given number of segments of equal size, 1 being the whole model', () => {
    expect(backwardSegments(llama32_1b, 3, true)).toEqual([
      [0, 5],
      [5, 11],
      [11, 16],
    ]);
    expect(backwardSegments({ ...llama32_1b, numLayers: 4 }, 3, false)).toEqual([
      [0, 1],
      [1, 3],
      [3, 4],
    ]);
    expect(backwardSegments(llama32_1b, 1, true)).toEqual([[0, 16]]);
    expect(backwardSegments({ ...llama32_1b, numLayers: 2 }, 9, true)).toEqual([
      [0, 1],
      [1, 2],
    ]);
  });

  it('auto: no returned gradient above one run of activations at a large full fine-tune (Llama-3.2-1B, worked by hand)', () => {
    // A layer's projections: 2048 x 64 x 2 x (32 + 8) + 3 x 2048 x 8192 = 60,817,408 values, 243 MB; the head 128,256 x
    // 2048 x 4 = 1.05 GB; one run's activations at the default bound just under 2^30 = 1.07 GB. The top segment takes
    // the head and one layer (at least one), the rest four layers (973 MB; five would be 1.22 GB).
    expect(backwardSegments(llama32_1b, 'auto', true)).toEqual([
      [0, 3],
      [3, 7],
      [7, 11],
      [11, 15],
      [15, 16],
    ]);
    expect(backwardSegments(llama32_1b, 'auto', false)).toEqual([[0, 16]]);
  });
});

function batchView(): BatchView {
  const batch = TrainingBatch.fromSequences(
    [
      [3, 7, 1],
      [8, 30],
      [41, 2, 9, 17],
    ],
    [
      [12, 25, 47, 2],
      [44, 19, 20],
      [5, 33],
    ],
    { temperatures: [1, 0.7, 1.3] },
  );
  batch.advantages.forEach((_, i) => (batch.advantages[i] = ((i % 5) - 2) / 2));
  return batch.all();
}

/** Gradients, loss and metrics of one trainer's `gradients` call, copied out of its reused buffers. */
async function run(trainer: OnnxTrainer, view: BatchView, microBatchSize: number) {
  const totals = lossTotals(view, { responseLength: 4, microBatchSize });
  const result = await trainer.gradients({ batch: view, totals, loss, microBatchSize });
  return { ...result, gradients: new Map([...result.gradients].map(([name, g]) => [name, Float32Array.from(g)])) };
}

function expectClose(got: Map<string, Float32Array>, want: Map<string, Float32Array>): void {
  expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
  for (const [name, expected] of want) {
    expect(expected.some((v) => v !== 0)).toBe(true);
    // Within 1e-5 of the tensor's largest value (a failure shows the name and how far).
    const error = relativeError(got.get(name)!, expected);
    expect({ name, error: error <= 1e-5 ? 'within 1e-5' : error }).toEqual({ name, error: 'within 1e-5' });
  }
}

describe.each([
  { layout: 'shared' as const, microBatchSize: 1 },
  { layout: 'fused' as const, microBatchSize: 0 },
])('a segmented backward, $layout layout, micro-batches of $microBatchSize rows', ({ layout, microBatchSize }) => {
  let config: DecoderConfig;
  let weights: Map<string, WeightTensor>;
  const trainers: OnnxTrainer[] = [];
  const view = batchView();
  const trainer = async (options: OnnxTrainerOptions) => {
    const made = await OnnxTrainer.create(config, weights, { intraOpNumThreads: 1 }, { adopt: true, vocabChunk: 20, layout, ...options });
    trainers.push(made);
    return made;
  };
  beforeAll(() => {
    ({ config, weights } = randomWeights(tinyConfigJson('Qwen3ForCausalLM', { tie_word_embeddings: true, num_hidden_layers: 4 }), 23));
  });
  afterAll(async () => {
    for (const t of trainers) await t.release();
  });

  it('gives the one graph’s gradients, loss and metrics in 2, 3 and 4 segments', async () => {
    const whole = await trainer({ backwardSegments: 1 });
    expect(whole.segments).toEqual([[0, 4]]);
    const want = await run(whole, view, microBatchSize);
    for (const count of [2, 3, 4]) {
      const segmented = await trainer({ backwardSegments: count });
      expect(segmented.segments).toHaveLength(count);
      const got = await run(segmented, view, microBatchSize);
      expect(got.loss).toBeCloseTo(want.loss, 6);
      expect(got.metrics['actor/weighted']).toBeCloseTo(want.metrics['actor/weighted']!, 6);
      expectClose(got.gradients, want.gradients);
    }
  });

  it("a bottom layer's and the embedding's gradients against central differences, in 3 segments", async () => {
    const segmented = await trainer({ backwardSegments: 3 });
    const { gradients } = await run(segmented, view, microBatchSize);
    const eps = 1e-2;
    for (const [name, index] of [
      ['model.layers.0.self_attn.q_proj.weight', 77],
      ['model.layers.0.mlp.down_proj.weight', 301],
      ['model.embed_tokens.weight', 12 * 32 + 5], // a target's row and an input's: the head and the gathered rows
    ] as const) {
      const numeric = await centralDifference(
        weights.get(name)!.data,
        index,
        eps,
        async () => (await run(segmented, view, microBatchSize)).loss,
      );
      const got = gradients.get(name)![index]!;
      expect(Math.abs(got)).toBeGreaterThan(1e-5);
      expect(Math.abs(got - numeric)).toBeLessThan(2e-2 * Math.abs(numeric) + 2e-5);
    }
  });
});

describe('a segmented backward under a LoRA adapter', () => {
  it("gives the one graph's adapter gradients", async () => {
    const { config, weights } = randomWeights(tinyConfigJson('Qwen2ForCausalLM', { num_hidden_layers: 3 }), 29);
    const settings = { rank: 2, alpha: 4, dropout: 0.1, targetModules: ['q_proj' as const, 'o_proj' as const, 'down_proj' as const] };
    const rng = new SeededRandom(31);
    const adapter = initLoraAdapter(config, settings, rng);
    for (const [name, t] of adapter)
      if (name.endsWith('lora_B.weight')) for (let i = 0; i < t.data.length; i++) t.data[i] = rng.normal() * 0.2;
    const view = batchView();
    const results = [];
    for (const backwardSegments of [1, 3]) {
      const trainer = await OnnxTrainer.create(
        config,
        weights,
        { intraOpNumThreads: 1 },
        { lora: { settings, adapter, seed: 3 }, backwardSegments },
      );
      results.push(await run(trainer, view, 2));
      await trainer.release();
    }
    const [want, got] = results as [Awaited<ReturnType<typeof run>>, Awaited<ReturnType<typeof run>>];
    expect(got.loss).toBeCloseTo(want.loss, 6);
    expectClose(got.gradients, want.gradients);
  });
});
