import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { scoreSequences, TrainingBatch } from '@drmas/core';
import { createOnnxPolicyBackend, type OnnxPolicyBackend } from '../src/index.js';
import { scoreChunks } from '../src/scoring/ScoreChunks.js';
import { maxAbsDiff } from './parityFixtures.js';

/** Rows of the given prompt and response lengths (ids do not matter to the chunking). */
function view(lengths: Array<[prompt: number, response: number]>) {
  return TrainingBatch.fromSequences(
    lengths.map(([p]) => new Array<number>(p).fill(3)),
    lengths.map(([, r]) => new Array<number>(r).fill(4)),
  ).all();
}

describe('scoreChunks', () => {
  const rows: Array<[number, number]> = [
    [3, 2],
    [3, 2],
    [4, 3],
    [6, 4],
    [6, 4],
  ];
  const config = { vocabSize: 10, numHeads: 2 };

  it('grows a chunk while both its logits and its attention scores fit (hand-worked)', () => {
    // [0, 3): logits 3 x 3 x 10 = 90 <= 100, attention 3 x 2 x 7^2 = 294 <= 400; a fourth row: logits 4 x 4 x 10 = 160.
    // [3, 5): logits 2 x 4 x 10 = 80, attention 2 x 2 x 10^2 = 400, both at or under the limits.
    expect(scoreChunks(view(rows), config, { logits: 100, attention: 400 })).toEqual([
      [0, 3],
      [3, 5],
    ]);
  });

  it('the attention bound alone splits rows whose logits fit', () => {
    // attention 300: [0, 3) still fits (294); rows 3 and 4 together need 400.
    expect(scoreChunks(view(rows), config, { logits: 100, attention: 300 })).toEqual([
      [0, 3],
      [3, 4],
      [4, 5],
    ]);
  });

  it('a row over both limits is a chunk of its own', () => {
    expect(
      scoreChunks(
        view([
          [50, 50],
          [1, 1],
        ]),
        config,
        { logits: 10, attention: 10 },
      ),
    ).toEqual([
      [0, 1],
      [1, 2],
    ]);
  });
});

describe('scoring long rows in chunks', () => {
  let onnx: OnnxPolicyBackend;
  beforeAll(async () => {
    onnx = await createOnnxPolicyBackend({ model: 'tiny', seed: 3, provider: 'cpu' });
  });
  afterAll(() => onnx.dispose());

  it('gives each row the log-probs it gets scored alone', async () => {
    // 20 rows of ~500 prompt tokens: at 4 heads, 20 x 4 x 510^2 attention scores exceed 2^24, so the batch is split.
    const ids = (n: number, salt: number) => Array.from({ length: n }, (_, i) => (i * 31 + salt * 7) % 500);
    const prompts = Array.from({ length: 20 }, (_, r) => ids(480 + r, r));
    const responses = Array.from({ length: 20 }, (_, r) => ids(4 + (r % 5), r + 1));
    const batch = TrainingBatch.fromSequences(prompts, responses).all();
    expect(scoreChunks(batch, onnx.config).length).toBeGreaterThan(1);
    const together = await scoreSequences(onnx, prompts, responses);
    for (let r = 0; r < prompts.length; r++) {
      const alone = await scoreSequences(onnx, [prompts[r]!], [responses[r]!]);
      expect(maxAbsDiff([together.logProbs[r]!], alone.logProbs)).toBeLessThan(1e-5);
    }
  });
});
