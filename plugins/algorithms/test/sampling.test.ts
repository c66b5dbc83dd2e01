import {
  ADVANTAGE_ESTIMATORS,
  computeAdvantage,
  DynamicSamplingAccumulator,
  selectGroupsWithVariance,
  zeroStdGroups,
} from '../src/index.js';

describe('zero-variance groups', () => {
  // a: 1, 1 (zero std); b: 0, 1; c: one row (not counted).
  const rewards = [1, 1, 0, 1, 2];
  const groups = ['a', 'a', 'b', 'b', 'c'];

  it('counts frac_reward_zero_std over groups and masks their rows', () => {
    const s = zeroStdGroups(rewards, groups);
    expect(s.fracRewardZeroStd).toBeCloseTo(1 / 3, 15);
    expect(s.zeroStdGroupCount).toBe(1);
    expect(s.groupCount).toBe(3);
    expect(s.rowMask).toEqual([0, 0, 1, 1, 1]);
  });

  it('a tolerance treats nearly equal rewards as equal', () => {
    expect(zeroStdGroups([0.1 + 0.2, 0.3], ['g', 'g']).rowMask).toEqual([1, 1]);
    expect(zeroStdGroups([0.1 + 0.2, 0.3], ['g', 'g'], { tolerance: 1e-12 }).rowMask).toEqual([0, 0]);
  });

  it('computeAdvantage can return a loss row mask excluding zero-variance groups', () => {
    const out = computeAdvantage(
      ADVANTAGE_ESTIMATORS.grpo,
      { tokenRewards: rewards.map((r) => [r]), responseMask: rewards.map(() => [1]), groupIds: groups },
      { excludeZeroStdGroups: true },
    );
    expect(out.lossRowMask).toEqual([0, 0, 1, 1, 1]);
    expect(
      computeAdvantage(ADVANTAGE_ESTIMATORS.grpo, { tokenRewards: [[1]], responseMask: [[1]], groupIds: ['g'] }).lossRowMask,
    ).toBeUndefined();
  });
});

describe('DAPO dynamic sampling', () => {
  it('keeps groups whose rewards differ (and groups of one by default)', () => {
    const s = selectGroupsWithVariance([1, 1, 0, 1, 2], ['a', 'a', 'b', 'b', 'c']);
    expect(s.keptGroupIds).toEqual(['b', 'c']);
    expect(s.droppedGroupIds).toEqual(['a']);
    expect(s.keptRows).toEqual([2, 3, 4]);
    expect(selectGroupsWithVariance([1, 1, 0, 1, 2], ['a', 'a', 'b', 'b', 'c'], { keepSingletonGroups: false }).keptGroupIds).toEqual([
      'b',
    ]);
  });

  it('accumulates kept groups across rounds until the target, trimming the surplus', () => {
    const acc = new DynamicSamplingAccumulator({ targetGroups: 3, maxRounds: 5 });
    expect(acc.addRound([1, 1, 0, 1], ['a', 'a', 'b', 'b'])).toBe('need-more'); // keeps b
    expect(acc.addRound([0, 0, 0, 0], ['c', 'c', 'd', 'd'])).toBe('need-more'); // keeps none
    expect(acc.addRound([0, 1, 1, 0, 0, 2], ['e', 'e', 'f', 'f', 'g', 'g'])).toBe('complete'); // keeps e, f, g
    const r = acc.result();
    expect(r.complete).toBe(true);
    expect(r.gaveUp).toBe(false);
    expect(r.rounds).toBe(3);
    expect(r.groups.map((g) => [g.round, g.groupId])).toEqual([
      [0, 'b'],
      [2, 'e'],
      [2, 'f'],
    ]);
    expect(r.rowsByRound).toEqual([[2, 3], [], [0, 1, 2, 3]]);
    expect(() => acc.addRound([0, 1], ['h', 'h'])).toThrow(/complete/);
  });

  it('gives up after maxRounds without enough groups', () => {
    const acc = new DynamicSamplingAccumulator({ targetGroups: 2, maxRounds: 2 });
    expect(acc.addRound([1, 1], ['a', 'a'])).toBe('need-more');
    expect(acc.addRound([0, 1], ['b', 'b'])).toBe('gave-up');
    const r = acc.result();
    expect(r.gaveUp).toBe(true);
    expect(r.complete).toBe(false);
    expect(r.groups.map((g) => g.groupId)).toEqual(['b']);
  });

  it('validates its settings', () => {
    expect(() => new DynamicSamplingAccumulator({ targetGroups: 0 })).toThrow(/targetGroups/);
    expect(() => new DynamicSamplingAccumulator({ targetGroups: 1, maxRounds: -1 })).toThrow(/maxRounds/);
  });
});
