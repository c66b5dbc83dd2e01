import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { lossTotals, TrainingBatch, type BatchView } from '@drmas/core';
import { SeededRandom } from '@drmas/models';
import { OnnxTrainer } from '../src/training/OnnxTrainer.js';
import { policyLoss, randomWeights, tinyConfigJson } from './parityFixtures.js';

/**
 * Two intra-op threads give bitwise the same gradients run after run. The batch repeats a few token ids hundreds of
 * times, so an embedding gradient summed on several threads without a fixed order (onnxruntime's CPU `ScatterND`
 * with `reduction: add`, which this trainer used before) shows in the last bits; the model is wide enough that
 * onnxruntime splits its kernels between the threads.
 */

const ROWS = 16;
const PROMPT = 16;
const RESPONSE = 48;
/** Ids drawn from this few: each appears about 85 times in the batch's 16 x 64 tokens. */
const DISTINCT_IDS = 12;

function repeatedIdBatch(): BatchView {
  const rng = new SeededRandom(4);
  const ids = (n: number) => Array.from({ length: n }, () => Math.floor(rng.uniform() * DISTINCT_IDS));
  const batch = TrainingBatch.fromSequences(
    Array.from({ length: ROWS }, () => ids(PROMPT)),
    Array.from({ length: ROWS }, () => ids(RESPONSE)),
  );
  batch.oldLogProbs = new Float32Array(batch.rows * RESPONSE).map(() => -2 - rng.uniform());
  for (let i = 0; i < batch.advantages.length; i++) batch.advantages[i] = rng.uniform() * 2 - 1;
  return batch.all();
}

describe('onnx training on two intra-op threads', () => {
  const { config, weights } = randomWeights(
    tinyConfigJson('Qwen2ForCausalLM', { vocab_size: 256, hidden_size: 256, intermediate_size: 256, tie_word_embeddings: true }),
    3,
  );
  const view = repeatedIdBatch();
  const loss = policyLoss();
  const totals = lossTotals(view, { responseLength: RESPONSE, microBatchSize: ROWS });
  let trainers: OnnxTrainer[];
  beforeAll(async () => {
    trainers = await Promise.all([2, 2, 1].map((threads) => OnnxTrainer.create(config, weights, { intraOpNumThreads: threads })));
  });
  afterAll(async () => {
    for (const t of trainers) await t.release();
  });

  it('gives bitwise the same gradients for the same inputs, run after run and trainer after trainer', async () => {
    const copy = (m: Map<string, Float32Array>) => new Map([...m].map(([name, g]) => [name, g.slice()]));
    const reference = copy((await trainers[0]!.gradients({ batch: view, totals, loss })).gradients);
    // The old ScatterND differed in about half of the runs on this batch.
    const runs = [trainers[0]!, trainers[0]!, trainers[0]!, trainers[1]!, trainers[1]!, trainers[1]!];
    const differing: string[] = [];
    for (const [k, trainer] of runs.entries()) {
      const { gradients } = await trainer.gradients({ batch: view, totals, loss });
      for (const [name, g] of gradients) if (!g.every((v, i) => Object.is(v, reference.get(name)![i]))) differing.push(`run ${k}: ${name}`);
    }
    expect(differing).toEqual([]);
    // And right: one thread sums in its own order, so equal within float32 noise (the tied embedding's gathered rows
    // and output-projection part included).
    const { gradients: single } = await trainers[2]!.gradients({ batch: view, totals, loss });
    const beyond: string[] = [];
    for (const [name, g] of single) {
      const scale = g.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
      const diff = g.reduce((m, v, i) => Math.max(m, Math.abs(v - reference.get(name)![i]!)), 0);
      if (!(diff <= 1e-5 * scale)) beyond.push(`${name}: ${diff / scale}`);
    }
    expect(beyond).toEqual([]);
  });
});
