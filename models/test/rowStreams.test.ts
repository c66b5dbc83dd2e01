import { describe, expect, test } from '@jest/globals';
import { rowKeyForSeed, rowStreams, seedForRowKey } from '../src/index.js';

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
