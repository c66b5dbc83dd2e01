import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeTurn, TrainingBatch, type Metrics, type Turn } from '@drmas/core';
import { MIXER_FILE, TeamMixer } from '../src/mixer/TeamMixer.js';
import { mixerSection } from '../src/config/criticConfig.js';

/**
 * Roles A and B over two trajectories, two tokens per turn; V is each turn's critic value before its first token.
 *   t0: A and B both at round 0 (one joint step): V = [0.2, 0.3], rewards 1 and 1 (team reward 1)
 *   t1: A at round 0 (V 0.1, reward 0), then B at round 1 (V 0.4, reward 1): two joint steps, the absent role's value 0
 */
const ROWS = [
  { traj: 't0', round: 0, agent: 'A', value: 0.2, reward: 1 },
  { traj: 't0', round: 0, agent: 'B', value: 0.3, reward: 1 },
  { traj: 't1', round: 0, agent: 'A', value: 0.1, reward: 0 },
  { traj: 't1', round: 1, agent: 'B', value: 0.4, reward: 1 },
];

function makeBatch(): TrainingBatch {
  const turns: Turn[] = ROWS.map((row, index) =>
    makeTurn({
      groupId: 'g',
      trajectoryId: row.traj,
      agentId: row.agent,
      round: row.round,
      workerGroupId: 'policy',
      index,
      promptIds: [1, 2, index + 3],
      responseIds: [5, 6],
      logProbs: [-1, -1],
      valid: true,
      reward: row.reward,
    }),
  );
  const batch = TrainingBatch.fromTurns(turns);
  batch.values = new Float64Array(batch.rows * 2);
  ROWS.forEach((row, r) => batch.values!.fill(row.value, r * 2, r * 2 + 2));
  return batch;
}

const settings = (overrides: Record<string, unknown> = {}) =>
  mixerSection.parse({ gamma: 1, lambda: 0.8, stateDim: 4, embedDim: 4, ...overrides });
const scratch = mkdtempSync(path.join(os.tmpdir(), 'team-mixer-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('TeamMixer credit, hand-worked', () => {
  test("VDN: the turns of a joint step share the team's TD(lambda) error equally, token rewards y_k = V_k + A_k on the last token", () => {
    // t0: Q_tot = 0.2 + 0.3 = 0.5, y = 1 (one joint step): error 0.5 over |w|^2 = 2, A = 0.25: y_A = 0.45, y_B = 0.55.
    // t1: Q_0 = 0.1 (B absent), Q_1 = 0.4 (A absent); y_1 = 1, y_0 = 0 + 1 x (0.2 x 0.4 + 0.8 x 1) = 0.88:
    //     each alone at its joint step (|w|^2 = 1): A: 0.1 + (0.88 - 0.1) = 0.88; B: 0.4 + (1 - 0.4) = 1.
    const batch = makeBatch();
    const metrics: Metrics = {};
    new TeamMixer('vdn', ['A', 'B'], settings(), 0).credit(batch, metrics);
    const expected = [0.45, 0.55, 0.88, 1];
    expected.forEach((y, r) => {
      expect(batch.tokenRewards[r * 2]).toBe(0);
      expect(batch.tokenRewards[r * 2 + 1]).toBeCloseTo(y, 12);
    });
    expect(metrics['critic/mixer/joint_steps']).toBe(3);
    expect(metrics['critic/mixer/q_tot_mean']).toBeCloseTo((0.5 + 0.1 + 0.4) / 3, 12);
    expect(metrics['critic/mixer/td_error_mean']).toBeCloseTo((0.5 + 0.78 + 0.6) / 3, 12);
    expect(metrics['critic/mixer/weight/A']).toBe(1);
  });

  test("QMIX: a turn's credit is its dQ_tot/dV_k times the team TD error, every weight >= 0", () => {
    const batch = makeBatch();
    const metrics: Metrics = {};
    const mixer = new TeamMixer('qmix', ['A', 'B'], settings(), 3);
    mixer.credit(batch, metrics);
    // Joint step t0: one target (1) and one Q_tot; A's and B's credits are w_A e and w_B e with the same e.
    const creditA = batch.tokenRewards[1]! - 0.2;
    const creditB = batch.tokenRewards[3]! - 0.3;
    expect(Math.sign(creditA)).toBe(Math.sign(creditB));
    expect(metrics['critic/mixer/weight/A']).toBeGreaterThanOrEqual(0);
    expect(metrics['critic/mixer/weight/B']).toBeGreaterThanOrEqual(0);
    mixer.train(metrics);
    expect(metrics['critic/mixer/grad_norm']).toBeGreaterThan(0);
  });

  test('QMIX saves its network and resumes it; a missing or foreign file is CHECKPOINT_INVALID naming it', () => {
    const first = new TeamMixer('qmix', ['A', 'B'], settings(), 3);
    first.credit(makeBatch(), {});
    first.train({});
    first.save(scratch);
    // The same seed, as a resumed run has (the state embedding's token vectors come from it); the network is the saved
    // one, a step past what that seed initializes.
    const resumed = new TeamMixer('qmix', ['A', 'B'], settings(), 3);
    const fresh = makeBatch();
    resumed.credit(fresh, {});
    resumed.load(scratch);
    const [a, b] = [makeBatch(), makeBatch()];
    first.credit(a, {});
    resumed.credit(b, {});
    expect(Array.from(b.tokenRewards)).toEqual(Array.from(a.tokenRewards));
    expect(Array.from(fresh.tokenRewards)).not.toEqual(Array.from(a.tokenRewards));
    expect(() => new TeamMixer('qmix', ['A', 'B'], settings(), 0).load(path.join(scratch, 'none'))).toThrow(
      expect.objectContaining({ code: 'CHECKPOINT_INVALID', file: path.join(scratch, 'none', MIXER_FILE) }),
    );
    expect(() => new TeamMixer('qmix', ['A', 'B'], settings({ embedDim: 8 }), 0).load(scratch)).toThrow(
      expect.objectContaining({ code: 'CHECKPOINT_INVALID', file: path.join(scratch, MIXER_FILE) }),
    );
    writeFileSync(path.join(scratch, MIXER_FILE), '{');
    expect(() => resumed.load(scratch)).toThrow(expect.objectContaining({ code: 'CHECKPOINT_INVALID' }));
  });
});
