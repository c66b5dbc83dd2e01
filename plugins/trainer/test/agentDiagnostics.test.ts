import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { testSlow } from '../../../test/support/describeSlow.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createKernel, SeededRng, type Distributions, type Metrics } from '@drmas/core';
import { TfjsPolicyBackend } from '../../backend-tfjs/src/TfjsPolicyBackend.js';
import { selectRuntime } from '../../backend-tfjs/src/runtime/RuntimeSelector.js';
import { randomModel, tinyConfigJson } from '../../backend-tfjs/test/modelFixtures.js';
import { makeAgentBatch, type AgentTurn } from '../../backend-tfjs/test/trainingFixtures.js';
import { agentRewardMetrics, diagnoseAgentRewards } from '../src/agentDiagnostics/agentRewardStatistics.js';
import { updateWorkerGroup } from '../src/updateWorkerGroup.js';
import { singleAgentGroup, vanillaPpoLoss } from './trainerFixtures.js';
import { toyProject } from './toyRollout.js';

const turn = (agent: string, group: string, reward: number, response = [4, 9, 2]): AgentTurn => ({
  prompt: [3, 7, 1],
  response,
  agent,
  group,
  reward,
});

/** Group g0: a gets 1, 0 and b gets 1, 1. */
const G0 = [turn('a', 'g0', 1), turn('a', 'g0', 0), turn('b', 'g0', 1), turn('b', 'g0', 1)];

describe("Dr. MAS's Proposition 4.3 on a batch's rewards (hand-worked)", () => {
  test('per-agent statistics, the predicted inflation over groups with sigma > 0, and the two advantage sets', () => {
    // Group g0: a gets 1, 0 and b gets 1, 1: mu = 0.75, sigma^2 = 0.1875; mu_a = 0.5, sigma_a^2 = 0.25; mu_b = 1,
    // sigma_b = 0. Inflation a: (0.25 + 0.0625) / 0.1875 = 5/3; b: (0 + 0.0625) / 0.1875 = 1/3. Group g1 (all 0)
    // has sigma 0 and is left out of the inflation, not of the means and stds.
    const batch = makeAgentBatch([...G0, turn('a', 'g1', 0), turn('b', 'g1', 0)]);
    const { agents, globalAdvantages, perAgentAdvantages } = diagnoseAgentRewards(batch);
    expect(agents.map((a) => a.role)).toEqual(['a', 'b']);
    const [a, b] = agents;
    expect(a!.rewardStd).toBeCloseTo(0.25, 12); // (0.5 + 0) / 2
    expect(b!.rewardStd).toBe(0);
    expect(a!.inflationPredicted).toBeCloseTo(5 / 3, 12);
    expect(b!.inflationPredicted).toBeCloseTo(1 / 3, 12);
    // Squared advantages summed over a's turns: global 1/3 + 3, per-agent 1 + 1; b's per-agent ones are all 0.
    expect(a!.inflationAdvantages).toBeCloseTo(10 / 3 / 2, 12);
    expect(b!.inflationAdvantages).toBeUndefined();
    // In g0 (the one group with sigma > 0) a's rewards vary, b's do not.
    expect([a!.constantShare, b!.constantShare]).toEqual([0, 1]);
    const R = batch.responseLength;
    const perRow = (column: Float64Array) => Array.from({ length: batch.rows }, (_, row) => column[row * R]!);
    // (r - 0.75) / sqrt(0.1875): 1/sqrt(3) and -sqrt(3); b's rows 1/sqrt(3); g1: 0.
    const s = Math.sqrt(3);
    perRow(globalAdvantages).forEach((x, i) => expect(x).toBeCloseTo([1 / s, -s, 1 / s, 1 / s, 0, 0][i]!, 12));
    expect(perRow(perAgentAdvantages)).toEqual([1, -1, 0, 0, 0, 0]);
  });

  test('the advantages summed over turns count the per-agent gradient a constant group does not get; the formula does not', () => {
    // g0 as above. g2: a gets 0, 0 and b gets 1, 0: mu = 0.25, sigma^2 = 0.1875. Formula per group: a 5/3 (g0) and
    // (0 + 0.0625) / 0.1875 = 1/3 (g2), mean 1; b 1/3 (g0) and 5/3 (g2), mean 1. Squared global advantages of a:
    // 1/3 + 3 (g0) + 1/3 + 1/3 (g2: -1/sqrt(3) twice) = 4; per-agent: 1 + 1 (g0), 0 (g2): ratio 2. b likewise:
    // 1/3 + 1/3 (g0) + 3 + 1/3 (g2) = 4 over 2. Each has half its turns in a varying group where it is constant.
    const batch = makeAgentBatch([...G0, turn('a', 'g2', 0), turn('a', 'g2', 0), turn('b', 'g2', 1), turn('b', 'g2', 0)]);
    for (const agent of diagnoseAgentRewards(batch).agents) {
      expect(agent.inflationPredicted).toBeCloseTo(1, 12);
      expect(agent.inflationAdvantages).toBeCloseTo(2, 12);
      expect(agent.constantShare).toBe(0.5);
    }
    expect(agentRewardMetrics(diagnoseAgentRewards(batch).agents[0]!)).toEqual({
      'agent/a/reward_std': 0.25,
      'agent/a/inflation_predicted': expect.closeTo(1, 12),
      'agent/a/inflation_advantages': expect.closeTo(2, 12),
      'agent/a/constant_share': 0.5,
    });
  });

  test('an agent in no group with varying rewards has no predicted inflation', () => {
    const batch = makeAgentBatch([turn('a', 'g0', 1), turn('b', 'g0', 1)]);
    expect(diagnoseAgentRewards(batch).agents.map((a) => a.inflationPredicted)).toEqual([undefined, undefined]);
  });
});

describe('the measured inflation and per-agent norms of a worker group update (tfjs, shared model)', () => {
  let backend: TfjsPolicyBackend;
  beforeAll(async () => {
    await selectRuntime('wasm');
    backend = new TfjsPolicyBackend('tfjs', 'test', randomModel(tinyConfigJson('Qwen2ForCausalLM'), 3), undefined);
  });
  afterAll(() => backend.dispose());

  test('measured equals predicted where the formula is exact: every agent mean at the group mean', async () => {
    // With mu_k = mu, GRPO's advantages of agent k's rows are (r - mu) / sigma and drmas's (r - mu) / sigma_k: the
    // same vector scaled by sigma_k / sigma, and at ratio 1 the policy-gradient loss is linear in the advantages, so
    // |g_grpo|^2 / |g_drmas|^2 = sigma_k^2 / sigma^2 = the prediction, whatever the per-row gradients are.
    // a: 0, 2 (mu 1, sigma 1); b: 0.5, 1.5 (mu 1, sigma 0.5); group: mu 1, sigma^2 = 0.625. a: 1.6, b: 0.4.
    const batch = makeAgentBatch([
      turn('a', 'g0', 0, [4, 9, 2]),
      turn('b', 'g0', 0.5, [8, 1]),
      turn('a', 'g0', 2, [5, 5, 6, 1]),
      turn('b', 'g0', 1.5, [12, 3, 3]),
      turn('a', 'g1', 1, [2]),
      turn('b', 'g1', 1, [7, 7]),
    ]);
    const diagnosis = diagnoseAgentRewards(batch);
    expect(diagnosis.agents[0]!.inflationPredicted).toBeCloseTo(1.6, 12);
    expect(diagnosis.agents[1]!.inflationPredicted).toBeCloseTo(0.4, 12);
    // The run's own advantages: anything nonzero (they drive the optimizer steps, not the measurement).
    batch.advantages.forEach((_, i, column) => (column[i] = batch.responseMask[i]! * (i % 3) * 0.3 - 0.2 * batch.responseMask[i]!));
    const group = { ...singleAgentGroup(backend, { lr: 1e-4, microBatchSize: 2, miniBatches: 2 }), agents: ['a', 'b'] };
    const metrics: Metrics = {};
    const distributions: Distributions = {};
    await updateWorkerGroup(group, batch.workerGroups()[0]!, {
      loss: vanillaPpoLoss(),
      rng: new SeededRng(0),
      metrics,
      distributions,
      lrScale: 1,
      agentDiagnosis: diagnosis,
    });
    expect(metrics['agent/a/inflation_measured']).toBeCloseTo(1.6, 4);
    expect(metrics['agent/b/inflation_measured']).toBeCloseTo(0.4, 4);
    for (const role of ['a', 'b']) {
      const norms = distributions[`agent/${role}/grad_norm`]!;
      expect(norms).toHaveLength(2); // two mini-batches
      expect(metrics[`agent/${role}/grad_norm`]).toBeCloseTo((norms[0]! + norms[1]!) / 2, 12);
      expect(metrics[`agent/${role}/grad_norm_max`]).toBe(Math.max(...norms));
    }
    // Each step's whole norm is at most the sum of its agents' (the triangle inequality), and above each one alone
    // only when the parts do not cancel: checked exactly against separate updates in the engines' own tests.
    distributions['actor/policy/grad_norm']!.forEach((total, i) =>
      expect(total).toBeLessThanOrEqual(distributions['agent/a/grad_norm']![i]! + distributions['agent/b/grad_norm']![i]! + 1e-6),
    );
  });
});

describe('trainer.agentDiagnostics.inflationEvery', () => {
  const project = toyProject('inflation-every', { trainer: { steps: 3, seed: 2, logRollouts: 0 } });
  afterAll(() => project.dispose());

  testSlow('measures the inflation at steps 1, 1 + N, ... and the cheap figures at every step (set from --set; slow)', async () => {
    const { kernel } = await createKernel({ cwd: project.dir, overrides: ['trainer.agentDiagnostics.inflationEvery=2'] });
    expect(kernel.config.trainer.agentDiagnostics).toEqual({ inflationEvery: 2 });
    const runDir = project.path('run');
    await kernel.run({ runDir, log: () => {} });
    const lines = readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, number>);
    expect(lines.map((l) => l.step)).toEqual([1, 2, 3]);
    for (const role of ['left', 'right']) {
      expect(lines.map((l) => `agent/${role}/inflation_measured` in l)).toEqual([true, false, true]);
      expect(lines.map((l) => `agent/${role}/grad_norm` in l && `agent/${role}/reward_std` in l)).toEqual([true, true, true]);
    }
  });

  test('a JSON object sets it too; a value that is neither is refused at its key, saying what the key takes', async () => {
    const { kernel } = await createKernel({ cwd: project.dir, overrides: ['trainer.agentDiagnostics={"inflationEvery": 4}'] });
    expect(kernel.config.trainer.agentDiagnostics).toEqual({ inflationEvery: 4 });
    await expect(createKernel({ cwd: project.dir, overrides: ['trainer.agentDiagnostics.inflationEvery=0'] })).rejects.toThrow(
      /trainer\.agentDiagnostics\.inflationEvery: Too small/,
    );
    await expect(createKernel({ cwd: project.dir, overrides: ['trainer.agentDiagnostics=yes'] })).rejects.toThrow(
      'trainer.agentDiagnostics expects true or false, or a JSON object; got "yes"',
    );
  });
});
