import { describe, expect, test } from '@jest/globals';
import { EpochSchedule, TaskPool } from '@drmas/core';

// Each epoch's order is the shuffle of 0..size-1 drawn by SplitMix32(hashParts(label, seed, 'epoch', epoch)), worked
// out for size 6, seed 3, label `code-train` by a separate Python implementation of the hash and the generator.
const EPOCH_0 = [4, 2, 3, 1, 0, 5];
const EPOCH_1 = [1, 2, 5, 3, 4, 0];

describe('EpochSchedule', () => {
  test('cursor c is position c mod size of epoch floor(c / size), each epoch its own order', () => {
    const schedule = new EpochSchedule(6, 3, 'code-train');
    expect(Array.from({ length: 12 }, (_, c) => schedule.indexAt(c))).toEqual([...EPOCH_0, ...EPOCH_1]);
    // Asked out of order (a resumed run), the same indices.
    expect([9, 2, 7].map((c) => new EpochSchedule(6, 3, 'code-train').indexAt(c))).toEqual([EPOCH_1[3], EPOCH_0[2], EPOCH_1[1]]);
  });
});

describe('TaskPool', () => {
  const train = Array.from({ length: 6 }, (_, i) => ({ id: `t${i}`, dataSource: 'd' }));
  const held = [{ id: 'h0', dataSource: 'd' }];

  test('batches follow the schedule from any cursor; every task handed out is a copy', () => {
    const pool = new TaskPool(train, held, 3, 'code-train');
    const first = pool.batch(0, 4);
    expect(first.tasks.map((t) => t.id)).toEqual(EPOCH_0.slice(0, 4).map((i) => `t${i}`));
    expect(first.nextCursor).toBe(4);
    expect(pool.batch(4, 4).tasks.map((t) => t.id)).toEqual([...EPOCH_0.slice(4), ...EPOCH_1.slice(0, 2)].map((i) => `t${i}`));
    first.tasks[0]!.dataSource = 'changed';
    expect(pool.batch(0, 1).tasks[0]!.dataSource).toBe('d');
    expect(pool.trainSize).toBe(6);
  });

  test('the held-out list is never handed out by batch; another label shuffles otherwise', () => {
    const pool = new TaskPool(train, held, 3, 'code-train');
    expect(pool.test()).toEqual(held);
    expect(pool.test()).not.toBe(held);
    expect(pool.batch(0, 60).tasks.some((t) => t.id === 'h0')).toBe(false);
    expect(new TaskPool(train, held, 3, 'debate-train').batch(0, 6).tasks.map((t) => t.id)).not.toEqual(
      pool.batch(0, 6).tasks.map((t) => t.id),
    );
  });
});
