import { describe, expect, test } from '@jest/globals';
import { Checkpointable, createKernel, type RolloutBatch, type TrainingBatch } from '@drmas/core';
import algorithmsPlugin, { ADVANTAGE_ESTIMATORS, computeAdvantage, RoleBaselines, type AdvantageInput } from '../src/index.js';
import { expectMatrixClose } from './closeTo.js';
import { advantagesOf, producer, trajectory } from './kernelStep.js';

/**
 * Roles A and B, one token per turn. Rows: t0 A 1, t0 B 0, t1 A 0, t1 B 1, t2 A 1, t2 A 0, t2 B 1.
 * With decay 0.5 and baselines from 0, trajectory by trajectory (A = r - b, then b <- 0.5 b + 0.5 R):
 *   t0: A: 1 - 0 = 1, b_A 0.5;          B: 0 - 0 = 0, b_B 0
 *   t1: A: 0 - 0.5 = -0.5, b_A 0.25;    B: 1 - 0 = 1, b_B 0.5
 *   t2: A: 1 - 0.25, 0 - 0.25 (R = 0.5), b_A 0.375;  B: 1 - 0.5 = 0.5, b_B 0.75
 */
const first: AdvantageInput = {
  tokenRewards: [[1], [0], [0], [1], [1], [0], [1]],
  responseMask: [[1], [1], [1], [1], [1], [1], [1]],
  trajectoryIds: ['t0', 't0', 't1', 't1', 't2', 't2', 't2'],
  agentIds: ['A', 'B', 'A', 'B', 'A', 'A', 'B'],
};
const FIRST = [[1], [0], [-0.5], [1], [0.75], [-0.25], [0.5]];

describe('rae: per-role moving-average baselines (SPIRAL)', () => {
  test('hand-worked over one batch, and the baselines carry into the next', () => {
    const state = new RoleBaselines();
    const out = computeAdvantage(ADVANTAGE_ESTIMATORS.rae, first, { raeDecay: 0.5 }, state);
    expectMatrixClose(out.advantages, FIRST, 1e-12);
    expect(state.getState()).toEqual({ A: 0.375, B: 0.75 });
    // t3: A 1 - 0.375, B 0 - 0.75.
    const next = computeAdvantage(
      ADVANTAGE_ESTIMATORS.rae,
      { tokenRewards: [[1], [0]], responseMask: [[1], [1]], trajectoryIds: ['t3', 't3'], agentIds: ['A', 'B'] },
      { raeDecay: 0.5 },
      state,
    );
    expectMatrixClose(next.advantages, [[0.625], [-0.75]], 1e-12);
  });

  test('the default decay is SPIRAL 0.95; without a state each call starts from 0', () => {
    const out = computeAdvantage(ADVANTAGE_ESTIMATORS.rae, first);
    // A: t0 1 - 0, b 0.05; t1 0 - 0.05, b 0.0475; t2 1 - 0.0475, 0 - 0.0475. B: t0 0, b 0; t1 1 - 0, b 0.05; t2 1 - 0.05.
    expectMatrixClose(out.advantages, [[1], [0], [-0.05], [1], [0.9525], [-0.0475], [0.95]], 1e-12);
  });

  test('needs agent and trajectory ids; a decay outside [0, 1) is refused', () => {
    const { agentIds: _a, ...noAgents } = first;
    expect(() => computeAdvantage(ADVANTAGE_ESTIMATORS.rae, noAgents)).toThrow("agentIds: is required by estimator 'rae'");
    expect(() => computeAdvantage(ADVANTAGE_ESTIMATORS.rae, first, { raeDecay: 1 })).toThrow('options.raeDecay: must be in [0, 1)');
  });
});

describe('rae in a run: its baselines are checkpointed, so a resumed run continues exactly', () => {
  const step1: RolloutBatch = {
    metrics: {},
    trajectories: [trajectory('g', 't0', { A: 1, B: 0 }), trajectory('g', 't1', { A: 0, B: 1 })],
  };
  const step2: RolloutBatch = { metrics: {}, trajectories: [trajectory('h', 't2', { A: 1, B: 0 })] };

  async function kernelWith(batches: RolloutBatch[]) {
    let seen: TrainingBatch | undefined;
    const { kernel } = await createKernel({
      cwd: process.cwd(),
      inline: {
        plugins: [
          algorithmsPlugin(),
          producer(batches),
          { name: 'capture', apply: (k) => k.hooks.afterStep.tap('capture', (r) => void (seen = r.batch)) },
        ],
        algorithm: { advantage: 'rae', raeDecay: 0.5 },
      },
    });
    const context = kernel.runContext({ runDir: '/x', log: () => {} });
    const step = async (n: number) => {
      await kernel.step(context, n);
      return seen!;
    };
    const states = () => kernel.getAll(Checkpointable).find((c) => c.key === 'algorithms/estimators')!;
    return { step, states };
  }

  test('step 2 after a restore from the step-1 state equals step 2 of the run that went on (hand-worked)', async () => {
    const straight = await kernelWith([step1, step2]);
    await straight.step(1);
    // Step 1: A: t0 1 - 0 (b 0.5), t1 0 - 0.5 (b 0.25); B: t0 0 - 0 (b 0), t1 1 - 0 (b 0.5).
    const saved = JSON.parse(JSON.stringify(straight.states().getState())) as unknown;
    expect(saved).toEqual({ rae: { A: 0.25, B: 0.5 } });
    const went = await straight.step(2);
    const resumed = await kernelWith([step2]);
    resumed.states().setState(saved);
    const again = await resumed.step(2);
    // Step 2: A 1 - 0.25 = 0.75, B 0 - 0.5 = -0.5 on the last token of each turn.
    for (const batch of [went, again]) {
      expect(advantagesOf(batch, 0)).toEqual([0.75, 0.75, 0.75]);
      expect(advantagesOf(batch, 1)).toEqual([-0.5, -0.5, -0.5]);
    }
  });
});
