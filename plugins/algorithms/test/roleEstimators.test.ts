import { describe, expect, test } from '@jest/globals';
import type { RolloutBatch } from '@drmas/core';
import { advantagesOf, runStep, trajectory } from './kernelStep.js';

// Three rollouts of one prompt; rows in trajectory order: t0 solver, t0 verifier, t1 solver, ...
// solver rewards 1, 0, 0; verifier rewards 1, 1, 0.
const team: RolloutBatch = {
  metrics: {},
  trajectories: [
    trajectory('g', 't0', { solver: 1, verifier: 1 }, 1),
    trajectory('g', 't1', { solver: 0, verifier: 1 }, 0),
    trajectory('g', 't2', { solver: 0, verifier: 0 }, 0),
  ],
};
const SOLVER_ROWS = [0, 2, 4];
const VERIFIER_ROWS = [1, 3, 5];
const last = (batch: Parameters<typeof advantagesOf>[0], rows: number[]) => rows.map((row) => advantagesOf(batch, row)[2]);

describe('agents.<role>.advantage: a per-role estimator map', () => {
  test("each estimator runs on its rows alone: grpo's trajectories hold only the solver's rows (hand-worked)", async () => {
    const { batch } = await runStep('grpo', [team], {}, [], { agents: { solver: {}, verifier: { advantage: 'rloo' } } });
    // grpo on the solver's rows: trajectory scores 1, 0, 0 (the verifier's rows are not averaged in);
    // mean 1/3, unbiased std sqrt(1/3): A = 2/3 / (sqrt(1/3) + 1e-6), -1/3 / (sqrt(1/3) + 1e-6).
    const s = Math.sqrt(1 / 3) + 1e-6;
    last(batch, SOLVER_ROWS).forEach((a, i) => expect(a).toBeCloseTo([2 / 3 / s, -1 / 3 / s, -1 / 3 / s][i]!, 10));
    // rloo on the verifier's rows: n/(n-1) (r - mean) = 3/2 (r - 2/3): 0.5, 0.5, -1.
    expect(last(batch, VERIFIER_ROWS)).toEqual([0.5, 0.5, -1].map((v) => expect.closeTo(v, 12)));
  });

  test('agents.<role>.advantageOptions sets options for that role only (hand-worked)', async () => {
    const { batch } = await runStep('drmas', [team], {}, [], {
      agents: { solver: {}, verifier: { advantageOptions: { normalizeByStd: false } } },
    });
    // verifier without std: r - 2/3. solver with std: (r - 1/3) / (sqrt(1/3) + 1e-6).
    expect(last(batch, VERIFIER_ROWS)).toEqual([1 / 3, 1 / 3, -2 / 3].map((v) => expect.closeTo(v, 12)));
    const s = Math.sqrt(1 / 3) + 1e-6;
    expect(last(batch, SOLVER_ROWS)).toEqual([2 / 3 / s, -1 / 3 / s, -1 / 3 / s].map((v) => expect.closeTo(v, 10)));
  });

  test('the same advantageOptions on every role apply to the whole batch', async () => {
    const options = { advantageOptions: { normalizeByStd: false } };
    const { batch } = await runStep('drmas', [team], {}, [], { agents: { solver: options, verifier: options } });
    expect(last(batch, SOLVER_ROWS)).toEqual([2 / 3, -1 / 3, -1 / 3].map((v) => expect.closeTo(v, 12)));
    expect(last(batch, VERIFIER_ROWS)).toEqual([1 / 3, 1 / 3, -2 / 3].map((v) => expect.closeTo(v, 12)));
  });

  test("a role with its own estimator does not inherit algorithm's grouping options", async () => {
    // algorithm.statisticsUnit would be refused by rloo; it belongs to grpo's rows.
    const { batch } = await runStep('grpo', [team], { statisticsUnit: 'turn' }, [], {
      agents: { solver: {}, verifier: { advantage: 'rloo' } },
    });
    expect(last(batch, VERIFIER_ROWS)).toEqual([0.5, 0.5, -1].map((v) => expect.closeTo(v, 12)));
  });

  test('with no algorithm.advantage, roles without an estimator keep zero advantages', async () => {
    const { batch } = await runStep(undefined, [team], {}, [], { agents: { solver: {}, verifier: { advantage: 'rloo' } } });
    expect(last(batch, SOLVER_ROWS)).toEqual([0, 0, 0]);
    expect(last(batch, VERIFIER_ROWS)).toEqual([0.5, 0.5, -1].map((v) => expect.closeTo(v, 12)));
  });

  test('a misspelt role estimator fails at start-up with a suggestion, naming the role key', async () => {
    await expect(runStep('drmas', [team], {}, [], { agents: { verifier: { advantage: 'rlooo' } } })).rejects.toMatchObject({
      code: 'UNKNOWN_NAME',
      key: 'agents.verifier.advantage',
      hint: 'Did you mean "rloo"?',
    });
  });

  test("a role estimator's inputs and options are checked at validate under the role's keys", async () => {
    await expect(runStep('drmas', [team], {}, [], { agents: { verifier: { advantage: 'remax' } } })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      key: 'agents.verifier.advantage',
    });
    await expect(
      runStep('drmas', [team], {}, [], { agents: { verifier: { advantage: 'rloo', advantageOptions: { statisticsUnit: 'turn' } } } }),
    ).rejects.toMatchObject({ code: 'CONFIG_INVALID', key: 'agents.verifier.advantageOptions.statisticsUnit' });
    await expect(
      runStep('drmas', [team], {}, [], { agents: { verifier: { advantageOptions: { groupKy: 'prompt' } } } }),
    ).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
    });
  });
});
