import { describe, expect, test } from '@jest/globals';
import { SeededRng } from '@drmas/core';
import { rowKeyForSeed, rowStreams, SeededRandom, seedForRowKey } from '../src/index.js';

describe('SeededRandom', () => {
  test('its stream is pinned: the core xoshiro128** seeded by splitmix32 from seed ^ 0x9e3779b9 (saved runs resample the same)', () => {
    // Worked out by a separate Python implementation of the seeding and of xoshiro128**.
    const first = (seed: number) => {
      const random = new SeededRandom(seed);
      return Array.from({ length: 4 }, () => random.nextUint32());
    };
    expect(first(0)).toEqual([1292791899, 1284423797, 2013314966, 3703690653]);
    expect(first(4_000_000_000)).toEqual([1377865220, 2811621936, 3429400210, 1775933678]);
    const core = new SeededRng((7 ^ 0x9e3779b9) >>> 0);
    const models = new SeededRandom(7);
    expect(Array.from({ length: 6 }, () => models.uniform())).toEqual(Array.from({ length: 6 }, () => core.next()));
  });
});

describe('rowKeyForSeed', () => {
  test('a row keyed for another call seed draws the stream it draws with its own seed', () => {
    // Seeds far apart both ways, keys past 2^31, and the trivial case.
    const cases = [
      [5, 4_000_000_000, 7],
      [4_000_000_000, 3, 2 ** 31 + 5],
      [123_456, 123_456, 9],
      [0, 0, 0],
    ] as const;
    for (const [callSeed, rowSeed, rowKey] of cases) {
      const own = rowStreams(rowSeed, 1, [rowKey])[0]!;
      const shared = rowStreams(callSeed, 1, [rowKeyForSeed(callSeed, rowSeed, rowKey)])[0]!;
      expect(Array.from({ length: 5 }, () => shared.uniform())).toEqual(Array.from({ length: 5 }, () => own.uniform()));
    }
    // Without the remapping the other seed's stream is a different one.
    const other = rowStreams(5, 1, [7])[0]!;
    const own = rowStreams(4_000_000_000, 1, [7])[0]!;
    expect(other.uniform()).not.toBe(own.uniform());
  });
});

describe('seedForRowKey', () => {
  test('a row sent alone with that seed draws the stream it draws at its key in the whole call', () => {
    for (const [seed, rowKey] of [
      [5, 7],
      [4_000_000_000, 2 ** 31 + 5],
      [0, 0],
      [2 ** 32 - 1, 3],
    ] as const) {
      const inCall = rowStreams(seed, rowKey + 1 > 8 ? 1 : rowKey + 1, rowKey + 1 > 8 ? [rowKey] : undefined).at(-1)!;
      const alone = rowStreams(seedForRowKey(seed, rowKey), 1)[0]!;
      expect(seedForRowKey(seed, rowKey)).toBeLessThan(2 ** 32);
      expect(Array.from({ length: 5 }, () => alone.uniform())).toEqual(Array.from({ length: 5 }, () => inCall.uniform()));
    }
    // Key 0 keeps the seed; another key moves it.
    expect(seedForRowKey(123, 0)).toBe(123);
    expect(seedForRowKey(123, 1)).not.toBe(123);
  });
});
