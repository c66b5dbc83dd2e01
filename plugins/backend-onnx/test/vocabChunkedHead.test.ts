import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { lossTotals, TrainingBatch, type BatchView } from '@drmas/core';
import type { HostTensor } from '@drmas/models';
import type { DecoderConfig } from '@drmas/models';
import { OnnxTrainer } from '../src/training/OnnxTrainer.js';
import { buildTrainingGraph } from '../src/training/TrainingGraph.js';
import { vocabChunks } from '../src/VocabChunkedHead.js';
import { centralDifference, randomWeights, tinyConfigJson, weightedLikelihoodWithEntropy } from './parityFixtures.js';

/**
 * The chunked output head's hand-written derivative against central finite differences of the loss the same graph
 * computes: a weighted log-likelihood plus an entropy term (so both upstream gradients reach the head), on a tiny
 * Qwen3 with tied embeddings whose vocabulary of 48 goes in chunks of 20, 20 and 8.
 */
const loss = weightedLikelihoodWithEntropy;

describe('vocabulary chunks', () => {
  it('splits a vocabulary into chunks of the given width, the last one shorter', () => {
    expect(vocabChunks(48, 20)).toEqual([
      [0, 20],
      [20, 40],
      [40, 48],
    ]);
    expect(vocabChunks(151_936)).toHaveLength(10);
  });
});

/**
 * Both layouts read a chunked head as the Hugging Face tensor's rows, whose gradient a run adds into the trainer's
 * buffer block by block (one block per chunk); the shared layout (real model sizes) here over two micro-batches, so
 * that each block also accumulates.
 */
describe.each([
  { layout: 'fused' as const, microBatchSize: 0 },
  { layout: 'shared' as const, microBatchSize: 1 },
])('vocabulary-chunked output head, $layout layout', ({ layout, microBatchSize }) => {
  let config: DecoderConfig;
  let weights: Map<string, HostTensor>;
  let trainer: OnnxTrainer;
  let view: BatchView;
  beforeAll(async () => {
    const made = randomWeights(tinyConfigJson('Qwen3ForCausalLM', { tie_word_embeddings: true }), 11);
    weights = made.weights;
    config = made.config;
    trainer = await OnnxTrainer.create(made.config, weights, {}, { adopt: true, vocabChunk: 20, layout });
    // Targets in every chunk, the last (short) one included.
    const batch = TrainingBatch.fromSequences(
      [
        [3, 7, 1],
        [8, 30],
      ],
      [
        [12, 25, 47, 2],
        [44, 19, 20],
      ],
      { temperatures: [1, 0.7] },
    );
    batch.advantages.forEach((_, i) => (batch.advantages[i] = ((i % 5) - 2) / 2));
    view = batch.all();
  });
  afterAll(() => trainer.release());

  it("the tied embedding's gradient passes in one block per chunk, the other weights' whole", () => {
    const graph = buildTrainingGraph(config, weights, loss, { withEntropy: true, withReference: false, vocabChunk: 20, layout });
    expect([...graph.gradientBlocks]).toEqual([
      [
        'model.embed_tokens.weight',
        [
          [0, 20],
          [20, 40],
          [40, 48],
        ],
      ],
    ]);
    expect(graph.gradients).toContain('model.embed_tokens.weight');
  });

  it('gradients of the embedding (head and input rows), the final norm and a projection match finite differences', async () => {
    const totals = lossTotals(view, { responseLength: 4, microBatchSize });
    const request = { batch: view, totals, loss, microBatchSize };
    const { gradients } = await trainer.gradients(request);
    const analytic = new Map([...gradients].map(([name, g]) => [name, Float32Array.from(g)]));
    const probes: [string, number][] = [
      ['model.embed_tokens.weight', 25 * 32 + 3], // a target's row: the head and the input embedding
      ['model.embed_tokens.weight', 45 * 32 + 10], // a row no target names, in the last chunk
      ['model.embed_tokens.weight', 5 * 32 + 30],
      ['model.norm.weight', 7],
      ['model.layers.1.mlp.down_proj.weight', 123],
    ];
    const eps = 1e-2;
    for (const [name, index] of probes) {
      const numeric = await centralDifference(weights.get(name)!.data, index, eps, async () => (await trainer.gradients(request)).loss);
      const got = analytic.get(name)![index]!;
      expect(Math.abs(got)).toBeGreaterThan(1e-5);
      expect(Math.abs(got - numeric)).toBeLessThan(2e-2 * Math.abs(numeric) + 2e-5);
    }
  });
});
