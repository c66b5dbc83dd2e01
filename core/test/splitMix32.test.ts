import { describe, expect, test } from '@jest/globals';
import { fmix32, fnv1a, hashParts, hashString, shuffledIndices, SplitMix32 } from '@drmas/core';

// Reference numbers: FNV-1a's published test vectors, and the rest computed by a separate Python implementation of
// FNV-1a, murmur3's fmix32 and splitmix32 (exact 32-bit integer arithmetic, no JavaScript).
describe('the hashes', () => {
  test('FNV-1a (32-bit): the published vectors, over UTF-16 code units', () => {
    expect([fnv1a(''), fnv1a('a'), fnv1a('foobar')]).toEqual([0x811c9dc5, 0xe40c292c, 0xbf9cf968]);
    expect(fnv1a('é')).toBe(1812687940);
  });

  test("murmur3's finalizer, and the hash of a string and of parts", () => {
    expect([fmix32(0), fmix32(1), fmix32(0xdeadbeef)]).toEqual([0, 1364076727, 233162409]);
    expect(hashString('drmas')).toBe(4193107865);
    // The separator keeps ("ab", "c") and ("a", "bc") apart; numbers hash as their text.
    expect([hashParts('ab', 'c'), hashParts('a', 'bc')]).toEqual([3621143793, 1222831361]);
    expect(hashParts('arithmetic', 0, 'train', 3, 0)).toBe(2318166209);
  });
});

describe('SplitMix32', () => {
  test('its sequence for a seed (seeds are taken modulo 2^32)', () => {
    const r = new SplitMix32(42);
    expect([r.nextUint32(), r.nextUint32(), r.nextUint32(), r.nextUint32()]).toEqual([939911724, 3948730756, 321366731, 3317318717]);
    expect(new SplitMix32(42).next()).toBe(939911724 / 4294967296);
    expect(new SplitMix32(2 ** 32 + 5).nextUint32()).toBe(new SplitMix32(5).nextUint32());
    expect(new SplitMix32(-1).nextUint32()).toBe(920564995);
  });

  test('int, range, shuffle and fork draw from the sequence', () => {
    const a = new SplitMix32(7);
    expect(Array.from({ length: 8 }, () => a.int(10))).toEqual([1, 4, 9, 5, 4, 2, 6, 2]);
    const b = new SplitMix32(7);
    expect(Array.from({ length: 8 }, () => b.range(3, 9))).toEqual([3, 6, 9, 6, 6, 4, 7, 4]);
    expect(new SplitMix32(11).shuffle([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])).toEqual([8, 0, 7, 2, 5, 9, 6, 3, 1, 4]);
    const fork = new SplitMix32(5).fork('tasks');
    expect([fork.nextUint32(), fork.nextUint32(), fork.nextUint32()]).toEqual([2524486275, 2755075835, 1306258145]);
    expect(SplitMix32.derive(5, 'tasks').nextUint32()).toBe(2524486275);
  });

  test('shuffledIndices is the shuffle of 0..n-1 its seed draws', () => {
    expect(Array.from(shuffledIndices(10, 11))).toEqual([8, 0, 7, 2, 5, 9, 6, 3, 1, 4]);
  });

  test('bad arguments are refused, not turned into a silent stream', () => {
    expect(() => new SplitMix32(Number.NaN)).toThrow('seed must be a finite number');
    expect(() => new SplitMix32(1).int(0)).toThrow('n must be a positive integer');
    expect(() => new SplitMix32(1).pick([])).toThrow('cannot pick from an empty list');
  });
});
