import { describe, expect, test } from '@jest/globals';
import { makeTurn, TrainingBatch, type Turn } from '@drmas/core';
import { runStep } from './kernelStep.js';
import { ADVANTAGE_ESTIMATORS, computeAdvantage, estimateView, type AdvantageInput } from '../src/index.js';
import { expectMatrixClose } from './closeTo.js';

/**
 * Prompt g: three rollouts of agents A and B over two rounds (t2 ends after round 0); prompt h: one
 * rollout. One token per turn. Joint rewards (mean of the round's rows): t0 0.5 then 1, t1 0 then 0.5, t2 1, h0 2.
 * Returns with gamma 0.5: t0 0.5 + 0.5 x 1 = 1 then 1; t1 0 + 0.5 x 0.5 = 0.25 then 0.5; t2 1; h0 2.
 * Nodes: (g, round 0) holds returns 1, 0.25, 1 (mean 0.75, max 1); (g, round 1) holds 1, 0.5 (mean 0.75, max 1);
 * (h, round 0) holds one joint action, whose advantage is 0.
 */
const rows: Array<[string, string, number, string, number]> = [
  ['g', 't0', 0, 'A', 1],
  ['g', 't0', 0, 'B', 0],
  ['g', 't0', 1, 'A', 1],
  ['g', 't0', 1, 'B', 1],
  ['g', 't1', 0, 'A', 0],
  ['g', 't1', 0, 'B', 0],
  ['g', 't1', 1, 'A', 1],
  ['g', 't1', 1, 'B', 0],
  ['g', 't2', 0, 'A', 1],
  ['g', 't2', 0, 'B', 1],
  ['h', 'h0', 0, 'A', 2],
];
const input: AdvantageInput = {
  tokenRewards: rows.map((r) => [r[4], 0]),
  responseMask: rows.map(() => [1, 1]),
  groupIds: rows.map((r) => r[0]),
  trajectoryIds: rows.map((r) => r[1]),
  turnIds: rows.map((r) => r[2]),
  agentIds: rows.map((r) => r[3]),
};
const perRow = (values: number[]) => values.map((v) => [v, v]);

describe('joint-action baselines (CoMLRL MAGRPO / MARLOO / MAREMAX)', () => {
  test.each([
    // G - mean: round 0: 1 - 0.75, 0.25 - 0.75, 1 - 0.75; round 1: 1 - 0.75, 0.5 - 0.75.
    ['magrpo', [0.25, 0.25, 0.25, 0.25, -0.5, -0.5, -0.25, -0.25, 0.25, 0.25, 0]],
    // G - mean of the others: round 0: 1 - (0.25 + 1) / 2, 0.25 - (1 + 1) / 2; round 1: 1 - 0.5, 0.5 - 1.
    ['marloo', [0.375, 0.375, 0.5, 0.5, -0.75, -0.75, -0.5, -0.5, 0.375, 0.375, 0]],
    // G - max: round 0: 1 - 1, 0.25 - 1; round 1: 1 - 1, 0.5 - 1.
    ['maremax', [0, 0, 0, 0, -0.75, -0.75, -0.5, -0.5, 0, 0, 0]],
  ] as const)('%s: every row of a joint action gets its advantage; returns are the joint returns (hand-worked)', (name, expected) => {
    const out = computeAdvantage(ADVANTAGE_ESTIMATORS[name], input, { gamma: 0.5 });
    expectMatrixClose(out.advantages, perRow([...expected]), 1e-12, name);
    expectMatrixClose(out.returns, perRow([1, 1, 1, 1, 0.25, 0.25, 0.5, 0.5, 1, 1, 2]), 1e-12, `${name} returns`);
  });

  test('on a view of the step batch: the same numbers, written into the batch', () => {
    const batch = TrainingBatch.fromTurns(
      rows.map(([groupId, trajectoryId, round, agentId, reward], index) =>
        makeTurn({
          groupId,
          trajectoryId,
          agentId,
          workerGroupId: agentId,
          round,
          index,
          promptIds: [1],
          responseIds: [4, 5],
          logProbs: [-1, -1],
          tokenRewards: [reward, 0],
          valid: true,
        }),
      ),
    );
    estimateView(ADVANTAGE_ESTIMATORS.marloo, batch.all(), { gamma: 0.5 });
    expectMatrixClose(
      Array.from({ length: rows.length }, (_, r) => Array.from(batch.advantages.subarray(2 * r, 2 * r + 2))),
      perRow([0.375, 0.375, 0.5, 0.5, -0.75, -0.75, -0.5, -0.5, 0.375, 0.375, 0]),
      1e-12,
    );
  });

  test('in a kernel step fed turns built as in 0.1 (`step`, no `round`): the same numbers, `step` read as the round', async () => {
    const turns01: unknown[] = rows.map(([groupId, trajectoryId, step, agentId, reward], index) => ({
      groupId,
      trajectoryId,
      agentId,
      workerGroupId: 'policy',
      step,
      index,
      promptIds: [1],
      responseIds: [4, 5],
      logProbs: [-1, -1],
      tokenRewards: [reward, 0],
      valid: true,
    }));
    const trajectories = [...new Set(rows.map((r) => r[1]))].map((id) => ({
      groupId: id.startsWith('h') ? 'h' : 'g',
      trajectoryId: id,
      taskId: id,
      done: true,
      turns: (turns01 as Turn[]).filter((turn) => turn.trajectoryId === id),
    }));
    const { batch } = await runStep('marloo', [{ trajectories, metrics: {} }], { gamma: 0.5 });
    expect(batch.turns.map((turn) => turn.round)).toEqual(rows.map((r) => r[2]));
    expectMatrixClose(
      Array.from({ length: rows.length }, (_, r) => Array.from(batch.advantages.subarray(2 * r, 2 * r + 2))),
      perRow([0.375, 0.375, 0.5, 0.5, -0.75, -0.75, -0.5, -0.5, 0.375, 0.375, 0]),
      1e-12,
    );
  });

  test('without rounds a whole trajectory is one joint action; gamma does not enter', () => {
    const { turnIds: _steps, ...flat } = input;
    // Trajectory means: t0 (1 + 0 + 1 + 1) / 4 = 0.75, t1 1/4, t2 1; mean 2/3.
    const out = computeAdvantage(ADVANTAGE_ESTIMATORS.magrpo, flat, { gamma: 0.5 });
    const a0 = 0.75 - 2 / 3;
    const a1 = 0.25 - 2 / 3;
    const a2 = 1 - 2 / 3;
    expectMatrixClose(out.advantages, perRow([a0, a0, a0, a0, a1, a1, a1, a1, a2, a2, 0]), 1e-12);
  });

  test('a group key that splits a joint action, or no trajectory ids, is refused', () => {
    expect(() => computeAdvantage(ADVANTAGE_ESTIMATORS.magrpo, input, { groupKey: 'prompt_agent' })).toThrow(
      "options.groupKey: puts the rows of one joint action (row 1's trajectory at its round) in two groups",
    );
    const { trajectoryIds: _ids, ...noTrajectories } = input;
    expect(() => computeAdvantage(ADVANTAGE_ESTIMATORS.marloo, noTrajectories)).toThrow("trajectoryIds: is required by estimator 'marloo'");
  });
});
