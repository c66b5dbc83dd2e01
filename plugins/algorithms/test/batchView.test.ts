import { TrainingBatch } from '@drmas/core';
import { ADVANTAGE_ESTIMATORS, computeAdvantage, estimateView, type BuiltinEstimatorName } from '../src/index.js';
import { expectClose } from './closeTo.js';
import { trajectory } from './kernelStep.js';

/**
 * 5 prompts x 4 episodes, agents a and b each one turn of 3 tokens per episode, the reward on the last; prompt p4's
 * rewards are all 1. The batch (packed as a step packs it) and the same data as `number[][]` input.
 */
function fixture() {
  const reward = (g: number, e: number, index: number) => (g === 4 ? 1 : ((g * 7 + e * 3 + index) % 5) * 0.25);
  const trajectories = Array.from({ length: 20 }, (_, i) => {
    const [g, e] = [Math.floor(i / 4), i % 4];
    return trajectory(`p${g}`, `p${g}-e${e}`, { a: reward(g, e, 0), b: reward(g, e, 1) });
  });
  const batch = TrainingBatch.fromTrajectories(trajectories);
  const R = batch.responseLength;
  const matrix = (flat: ArrayLike<number>, rows: ArrayLike<number>) =>
    Array.from(rows, (r) => Array.from({ length: R }, (_, t) => flat[r * R + t]!));
  const nested = (rows: ArrayLike<number>) => ({
    tokenRewards: matrix(batch.tokenRewards, rows),
    responseMask: matrix(batch.responseMask, rows),
    groupIds: Array.from(rows, (r) => batch.ids.group.names[batch.ids.group.codes[r]!]!),
    agentIds: Array.from(rows, (r) => batch.ids.agent.names[batch.ids.agent.codes[r]!]!),
    trajectoryIds: Array.from(rows, (r) => batch.ids.trajectory.names[batch.ids.trajectory.codes[r]!]!),
  });
  return { batch, R, nested };
}

describe('estimators on a view of the batch', () => {
  it.each<BuiltinEstimatorName>(['drmas', 'grpo', 'rloo', 'reinforce_plus_plus_baseline', 'magrpo'])(
    '%s writes the advantages and returns the number[][] path computes into the batch, in place',
    (name) => {
      const { batch, R, nested } = fixture();
      const all = batch.all();
      const before = batch.advantages;
      estimateView(ADVANTAGE_ESTIMATORS[name], all, {});
      expect(batch.advantages).toBe(before);
      const out = computeAdvantage(name, nested(all.rows));
      for (let r = 0; r < batch.rows; r++) {
        for (let t = 0; t < R; t++) {
          expectClose(batch.advantages[r * R + t]!, out.advantages[r]![t]!, 0, `${r},${t}`);
          expectClose(batch.returns[r * R + t]!, out.returns[r]![t]!, 0, `${r},${t}`);
        }
      }
    },
  );

  it('a view of some rows writes those rows only, as the same rows alone would be estimated', () => {
    const { batch, R, nested } = fixture();
    const rows = batch.all().rows.filter((r) => batch.ids.agent.names[batch.ids.agent.codes[r]!] === 'b');
    batch.advantages.fill(7);
    estimateView(ADVANTAGE_ESTIMATORS.grpo, batch.view(rows), {});
    const out = computeAdvantage('grpo', nested(rows));
    rows.forEach((r, i) => {
      for (let t = 0; t < R; t++) expectClose(batch.advantages[r * R + t]!, out.advantages[i]![t]!, 0, `${r},${t}`);
    });
    const others = batch.all().rows.filter((r) => !rows.includes(r));
    for (const r of others) expect(Array.from(batch.advantages.subarray(r * R, (r + 1) * R))).toEqual(new Array(R).fill(7));
  });

  it('returns the batch rows of zero-variance groups with excludeZeroStdGroups (prompt p4: every reward 1)', () => {
    const { batch } = fixture();
    const excluded = estimateView(ADVANTAGE_ESTIMATORS.grpo, batch.all(), { excludeZeroStdGroups: true });
    const p4 = batch.all().rows.filter((r) => batch.ids.group.names[batch.ids.group.codes[r]!] === 'p4');
    expect(excluded).toEqual(Array.from(p4));
    expect(estimateView(ADVANTAGE_ESTIMATORS.grpo, batch.all(), {})).toEqual([]);
  });

  it('names the batch input an estimator requires and the batch lacks', () => {
    const { batch } = fixture();
    expect(() => estimateView(ADVANTAGE_ESTIMATORS.gae, batch.all(), {})).toThrow(/values: is required by estimator 'gae'/);
  });
});
