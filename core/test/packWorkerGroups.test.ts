import { describe, expect, test } from '@jest/globals';
import { packTurns, packWorkerGroups, rowsWithAdvantage, selectRows, type Turn } from '@drmas/core';

function turn(agentId: string, workerGroupId: string, responseIds: number[], temperature?: number): Turn {
  return {
    groupId: 'g', trajectoryId: 't', agentId, step: 0, workerGroupId, index: 0, promptIds: [1, 2],
    responseIds, logProbs: responseIds.map((_, j) => -0.5 * (j + 1)), valid: true, advantages: responseIds.map(() => 2),
    ...(temperature === undefined ? {} : { temperature }),
  };
}

describe('packing turns into worker-group batches', () => {
  test('one batch per worker group holding only its turns, responses right-padded', () => {
    const [a, b] = packWorkerGroups({
      metrics: {},
      trajectories: [{ groupId: 'g', trajectoryId: 't', taskId: 'x', done: true, turns: [turn('solver', 'a', [5, 6, 7]), turn('verifier', 'b', [9]), turn('solver', 'a', [8])] }],
    });
    expect([a.workerGroupId, b.workerGroupId]).toEqual(['a', 'b']);
    expect(a.rows).toBe(2);
    expect(Array.from(a.responseIds)).toEqual([5, 6, 7, 8, 0, 0]);
    expect(Array.from(a.responseMask)).toEqual([1, 1, 1, 1, 0, 0]);
    expect(Array.from(a.rolloutLogProbs)).toEqual([-0.5, -1, -1.5, -0.5, 0, 0]);
    expect(b.agentIds).toEqual(['verifier']);
  });

  test('row temperatures are kept when a turn was sampled at one other than 1 (greedy and unset count as 1)', () => {
    expect(packTurns('a', [turn('s', 'a', [1]), turn('s', 'a', [2], 1), turn('s', 'a', [3], 0)]).temperatures).toBeUndefined();
    const batch = packTurns('a', [turn('s', 'a', [1], 0.6), turn('s', 'a', [2]), turn('s', 'a', [3], 0)]);
    expect(Array.from(batch.temperatures!)).toEqual([Math.fround(0.6), 1, 1]);
    expect(Array.from(selectRows(batch, [2, 0]).temperatures!)).toEqual([1, Math.fround(0.6)]);
  });

  test('rows with advantage: a nonzero advantage on a trained token; padding does not count', () => {
    const batch = packTurns('a', [turn('s', 'a', [1, 2]), turn('s', 'a', [3]), turn('s', 'a', [4, 5]), turn('s', 'a', [6])]);
    batch.advantages.set([0, 0, /* row 1 */ 0, 0, /* row 2 */ 0, -0.25, /* row 3 */ 0, 0]);
    batch.advantages[1 * batch.responseLength + 1] = 7; // padding of row 1
    batch.advantages[3 * batch.responseLength] = 1e-3;
    expect(rowsWithAdvantage(batch)).toEqual([2, 3]);
  });
});
