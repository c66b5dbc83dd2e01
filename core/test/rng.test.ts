import { describe, expect, test } from '@jest/globals';
import { SeededRng, type RngState } from '@drmas/core';

describe('SeededRng', () => {
  test('the sequence, state and forks of a seed are pinned (runs are reproducible across versions)', () => {
    const rng = new SeededRng(42);
    expect(Array.from({ length: 4 }, () => rng.nextUint32())).toEqual([2837322924, 544945897, 479756282, 3500138142]);
    expect(rng.getState()).toEqual([2211311650, 1639752229, 3329302215, 2393945593]);
    expect(rng.next()).toBe(0.0791056456144914);
    expect(new SeededRng(42).fork('orchestra').getState()).toEqual([4051890333, 1612129824, 1092956520, 2597290299]);
  });

  test('from the state (1, 2, 3, 4) it draws the reference xoshiro128** sequence (Blackman and Vigna reference C code)', () => {
    const rng = new SeededRng([1, 2, 3, 4]);
    const reference = [11520, 0, 5927040, 70819200, 2031721883, 1637235492, 1287239034, 3734860849, 3729100597, 4258142804];
    expect(Array.from({ length: 10 }, () => rng.nextUint32())).toEqual(reference);
  });

  test('setState resumes the sequence exactly', () => {
    const a = new SeededRng(7);
    a.next();
    const b = new SeededRng(0);
    b.setState(a.getState());
    expect(Array.from({ length: 8 }, () => b.nextUint32())).toEqual(Array.from({ length: 8 }, () => a.nextUint32()));
  });

  test('a state that is not four numbers is refused', () => {
    const rng = new SeededRng(0);
    expect(() => rng.setState([1, 2, 3] as unknown as RngState)).toThrow('an Rng state is 4 numbers; got 3 entries');
    expect(() => new SeededRng([1, 2, 3, 4, 5] as unknown as RngState)).toThrow('got 5 entries');
  });
});
