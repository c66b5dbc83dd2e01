import { describe, expect, test } from '@jest/globals';
import { ADVANTAGE_ESTIMATORS, computeAdvantage, type AdvantageInput, type GroupKeyName, type StatisticsUnit } from '../src/index.js';
import { expectMatrixClose } from './closeTo.js';

/**
 * One prompt, three rollouts of two agents (A, B); one token per turn, its score on it.
 * row: trajectory agent score
 *   0: t0 A 1    1: t0 B 1    2: t0 A 0
 *   3: t1 A 0    4: t1 B 0
 *   5: t2 A 1    6: t2 B 0
 */
const batch: AdvantageInput = {
  tokenRewards: [[1], [1], [0], [0], [0], [1], [0]],
  responseMask: [[1], [1], [1], [1], [1], [1], [1]],
  groupIds: ['g', 'g', 'g', 'g', 'g', 'g', 'g'],
  trajectoryIds: ['t0', 't0', 't0', 't1', 't1', 't2', 't2'],
  agentIds: ['A', 'B', 'A', 'A', 'B', 'A', 'B'],
};

// The four combinations of group key and statistics unit, worked by hand without the std (Dr. GRPO's r - mean).
const HAND_WORKED: Array<[GroupKeyName, StatisticsUnit, string, number[]]> = [
  // Trajectory means t0 (1+1+0)/3 = 2/3, t1 0, t2 (1+0)/2 = 1/2; their mean 7/18. Every row gets its trajectory's.
  ['prompt', 'trajectory', 'grpo', [5 / 18, 5 / 18, 5 / 18, -7 / 18, -7 / 18, 1 / 9, 1 / 9]],
  // A's rows 1, 0, 0, 1: mean 1/2. B's rows 1, 0, 0: mean 1/3.
  ['prompt_agent', 'turn', 'drmas', [1 / 2, 2 / 3, -1 / 2, -1 / 2, -1 / 3, 1 / 2, -1 / 3]],
  // All seven rows: mean 3/7.
  ['prompt', 'turn', 'per-turn statistics only', [4 / 7, 4 / 7, -3 / 7, -3 / 7, -3 / 7, 4 / 7, -3 / 7]],
  // A per trajectory: t0 (1+0)/2 = 1/2, t1 0, t2 1, mean 1/2. B per trajectory: 1, 0, 0, mean 1/3.
  ['prompt_agent', 'trajectory', 'per-agent statistics only', [0, 2 / 3, 0, -1 / 2, -1 / 3, 1 / 2, -1 / 3]],
];

describe('statisticsUnit: the averaging unit, independent of the group key', () => {
  test.each(HAND_WORKED)('groupKey %s, unit %s (%s): hand-worked', (groupKey, statisticsUnit, _name, expected) => {
    for (const estimator of [ADVANTAGE_ESTIMATORS.grpo, ADVANTAGE_ESTIMATORS.drmas]) {
      const out = computeAdvantage(estimator, batch, { groupKey, statisticsUnit, normalizeByStd: false });
      expectMatrixClose(
        out.advantages,
        expected.map((a) => [a]),
        1e-12,
        `${estimator.name} ${groupKey} ${statisticsUnit}`,
      );
    }
  });

  test('the defaults: grpo is prompt + trajectory, drmas is prompt_agent + turn', () => {
    const [grpoCase, drmasCase] = HAND_WORKED;
    expectMatrixClose(
      computeAdvantage(ADVANTAGE_ESTIMATORS.grpo, batch, { normalizeByStd: false }).advantages,
      grpoCase![3].map((a) => [a]),
      1e-12,
    );
    expectMatrixClose(
      computeAdvantage(ADVANTAGE_ESTIMATORS.drmas, batch, { normalizeByStd: false }).advantages,
      drmasCase![3].map((a) => [a]),
      1e-12,
    );
  });

  test('per-agent statistics over trajectories, with the std (hand-worked)', () => {
    // A's trajectory means 1/2, 0, 1: mean 1/2, unbiased var (0 + 1/4 + 1/4) / 2 = 1/4, std 1/2.
    // B's 1, 0, 0: mean 1/3, var (4/9 + 1/9 + 1/9) / 2 = 1/3, std sqrt(1/3).
    const a = 0.5 / (0.5 + 1e-6);
    const sb = Math.sqrt(1 / 3);
    const out = computeAdvantage(ADVANTAGE_ESTIMATORS.drmas, batch, { statisticsUnit: 'trajectory' });
    expectMatrixClose(out.advantages, [[0], [2 / 3 / (sb + 1e-6)], [0], [-a], [-1 / 3 / (sb + 1e-6)], [a], [-1 / 3 / (sb + 1e-6)]], 1e-12);
  });

  test('a unit for an estimator without one, an unknown unit, or trajectories without their ids are refused', () => {
    expect(() => computeAdvantage(ADVANTAGE_ESTIMATORS.rloo, batch, { statisticsUnit: 'turn' })).toThrow(
      "options.statisticsUnit: does not apply to estimator 'rloo'",
    );
    expect(() => computeAdvantage(ADVANTAGE_ESTIMATORS.grpo, batch, { statisticsUnit: 'trajectories' as StatisticsUnit })).toThrow(
      'Did you mean "trajectory"?',
    );
    const { trajectoryIds: _ids, ...withoutTrajectories } = batch;
    expect(() => computeAdvantage(ADVANTAGE_ESTIMATORS.drmas, withoutTrajectories, { statisticsUnit: 'trajectory' })).toThrow(
      "trajectoryIds: is required by statisticsUnit 'trajectory'",
    );
  });
});
