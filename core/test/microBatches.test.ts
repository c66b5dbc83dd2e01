import { describe, expect, it } from '@jest/globals';
import { partMicroBatches, TrainingBatch } from '@drmas/core';

/** Rows with prompt lengths `prompts` and response lengths `responses`. */
function batchOf(prompts: number[], responses: number[]): TrainingBatch {
  return TrainingBatch.fromSequences(
    prompts.map((n) => new Int32Array(n).fill(1)),
    responses.map((n) => new Int32Array(n).fill(2)),
  );
}
const rowsOf = (cut: Array<{ rows: Int32Array }>) => cut.map((m) => Array.from(m.rows));

describe('partMicroBatches', () => {
  it('cuts by rows alone without a token budget', () => {
    expect(rowsOf(partMicroBatches(Int32Array.of(0, 1, 2, 3, 4), 2))).toEqual([[0, 1], [2, 3], [4]]);
    expect(rowsOf(partMicroBatches(Int32Array.of(0, 1, 2), 0))).toEqual([[0, 1, 2]]);
  });

  it('packs rows widest first, greedily, under a budget of padded tokens (rows x (longest prompt + longest response))', () => {
    // Rows (prompt + response): 0: 3+5, 1: 2+6, 2: 4+1, 3: 1+1, 4: 10+10; widest first 4, 0, 1 (both 8, in order), 2, 3.
    const batch = batchOf([3, 2, 4, 1, 10], [5, 6, 1, 1, 10]);
    const rows = Int32Array.of(0, 1, 2, 3, 4);
    // Budget 20: {4} 20; with 0, 2 x 20 = 40, cut. {0,1} 2 x (3+6) = 18; with 2, 3 x (4+6) = 30, cut. {2,3} 2 x 5 = 10.
    expect(rowsOf(partMicroBatches(rows, 0, undefined, { tokens: 20, batch }))).toEqual([[4], [0, 1], [2, 3]]);
    // A row over the budget goes alone; rows still bound the size.
    expect(rowsOf(partMicroBatches(rows, 0, undefined, { tokens: 5, batch }))).toEqual([[4], [0], [1], [2], [3]]);
    expect(rowsOf(partMicroBatches(rows, 2, undefined, { tokens: 1000, batch }))).toEqual([[4, 0], [1, 2], [3]]);
    // Each part on its own: agent 0 has rows 0, 2, 4 (widest first 4, 0, 2); agent 1 has rows 1, 3.
    const parts = Int32Array.of(0, 1, 0, 1, 0);
    expect(partMicroBatches(rows, 0, parts, { tokens: 20, batch }).map((m) => [m.part, Array.from(m.rows)])).toEqual([
      [0, [4]],
      [0, [0, 2]],
      [1, [1, 3]],
    ]);
  });

  it('short rows between long ones share a micro-batch instead of each padding to a long neighbour', () => {
    // Rows alternate long (2+8) and short (1+1). In order, a budget of 10 takes one row at a time (a short row and the
    // next long one are 2 x 10 = 20): six runs. Widest first, the three short rows go together (3 x 2 = 6): four.
    const batch = batchOf([2, 1, 2, 1, 2, 1], [8, 1, 8, 1, 8, 1]);
    const cut = partMicroBatches(Int32Array.of(0, 1, 2, 3, 4, 5), 0, undefined, { tokens: 10, batch });
    expect(rowsOf(cut)).toEqual([[0], [2], [4], [1, 3, 5]]);
    // Rows in the order given are a part's rows: 5, 4 and 1 of the batch, widest first 4, then 5 and 1 together.
    expect(rowsOf(partMicroBatches(Int32Array.of(5, 4, 1), 0, undefined, { tokens: 10, batch }))).toEqual([[4], [5, 1]]);
  });

  it('with a unit of 2 (preference pairs), packs whole pairs: an even count of rows in every micro-batch', () => {
    // Rows (prompt + response): 0: 2+2, 1: 2+3, 2: 1+1, 3: 3+1, 4: 1+2, 5: 1+1; pairs {0,1} 2+3, {2,3} 3+1, {4,5} 1+2,
    // widest first as they come.
    const batch = batchOf([2, 2, 1, 3, 1, 1], [2, 3, 1, 1, 2, 1]);
    const rows = Int32Array.of(0, 1, 2, 3, 4, 5);
    // Budget 16 by single rows, widest first 1, 0, 3, 4, 2, 5: {1,0} 2 x (2+3) = 10; with 3, 3 x (3+3) = 18, cut;
    // {3,4,2} 3 x (3+2) = 15; with 5, 20, cut; {5}: the second micro-batch splits two pairs.
    expect(rowsOf(partMicroBatches(rows, 0, undefined, { tokens: 16, batch }))).toEqual([[1, 0], [3, 4, 2], [5]]);
    // Budget 16 by pairs: {0,1} 10; with {2,3} 4 x (3+3) = 24, cut; {2,3} 8; with {4,5} 4 x (3+2) = 20, cut; {4,5}.
    expect(rowsOf(partMicroBatches(rows, 0, undefined, { tokens: 16, batch, unit: 2 }))).toEqual([
      [0, 1],
      [2, 3],
      [4, 5],
    ]);
    // A budget of 24 takes two pairs: {0,1,2,3} 4 x (3+3) = 24; {4,5}.
    expect(rowsOf(partMicroBatches(rows, 0, undefined, { tokens: 24, batch, unit: 2 }))).toEqual([
      [0, 1, 2, 3],
      [4, 5],
    ]);
    // A pair wider than the budget goes alone; rows still bound the size (4 rows: two pairs).
    expect(rowsOf(partMicroBatches(rows, 0, undefined, { tokens: 1, batch, unit: 2 }))).toEqual([
      [0, 1],
      [2, 3],
      [4, 5],
    ]);
    expect(rowsOf(partMicroBatches(rows, 4, undefined, { tokens: 1000, batch, unit: 2 }))).toEqual([
      [0, 1, 2, 3],
      [4, 5],
    ]);
    // Pairs go widest first as wholes, each pair's rows in their order: {0,1} 1+1, {2,3} 3+3.
    const narrowFirst = batchOf([1, 1, 3, 2], [1, 1, 1, 3]);
    expect(rowsOf(partMicroBatches(Int32Array.of(0, 1, 2, 3), 0, undefined, { tokens: 12, batch: narrowFirst, unit: 2 }))).toEqual([
      [2, 3],
      [0, 1],
    ]);
  });
});
