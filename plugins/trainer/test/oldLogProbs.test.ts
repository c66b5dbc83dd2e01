import { afterEach, describe, expect, jest, test } from '@jest/globals';
import { createKernel, SeededRng, type Metrics } from '@drmas/core';
import { TfjsPolicyBackend } from '../../backend-tfjs/src/TfjsPolicyBackend.js';
import { selectRuntime } from '../../backend-tfjs/src/runtime/RuntimeSelector.js';
import { batchLogits, logSoftmax, randomModel, tinyConfigJson } from '../../backend-tfjs/test/modelFixtures.js';
import { makeBatch } from '../../backend-tfjs/test/trainingFixtures.js';
import { oldLogProbSource, updateWorkerGroup, type OldLogProbSource } from '../src/updateWorkerGroup.js';
import { singleAgentGroup, vanillaPpoLoss } from './trainerFixtures.js';

const PAIRS: [number[], number[]][] = [
  [
    [3, 7, 1, 9],
    [12, 5, 20],
  ],
  [[8], [30, 4, 11, 2]],
];

const loss = vanillaPpoLoss();

const backends: TfjsPolicyBackend[] = [];
afterEach(() => {
  for (const b of backends.splice(0)) b.dispose();
});

/**
 * One update of a fresh tiny model on PAIRS with positive advantages, where the rollout engine's log-probs are the
 * true ones minus 1: the ratio against them is e, far outside the clip range, while against recomputed ones it is 1.
 */
async function updateWith(source: OldLogProbSource, scoreDelayMs = 0) {
  await selectRuntime('wasm');
  const model = randomModel(tinyConfigJson('Qwen2ForCausalLM'), 11);
  const backend = new TfjsPolicyBackend('tfjs', 'test', model, undefined);
  backends.push(backend);
  const batch = makeBatch(PAIRS, [1, 0.5]);
  const probabilities: number[] = [];
  PAIRS.forEach(([prompt, response], r) => {
    const logits = batchLogits(model, [[...prompt, ...response]])[0]!;
    response.forEach((token, j) => {
      const logp = logSoftmax(logits[prompt.length - 1 + j]!)[token]!;
      batch.batch.rolloutLogProbs[r * batch.batch.responseLength + j] = logp - 1;
      probabilities.push(Math.exp(logp));
    });
  });
  const before = await backend.exportWeights();
  const original = backend.score.bind(backend);
  const score = jest.spyOn(backend, 'score').mockImplementation(async (...args) => {
    await new Promise((resolve) => setTimeout(resolve, scoreDelayMs));
    return original(...args);
  });
  const group = singleAgentGroup(backend, { lr: 1e-2, microBatchSize: 4, miniBatches: 1 });

  const metrics: Metrics = {};
  await updateWorkerGroup(group, batch, { loss, rng: new SeededRng(0), metrics, lrScale: 1, oldLogProbs: source });
  const after = await backend.exportWeights();
  const moved = [...before].some(([name, t]) => t.data.some((x, i) => x !== after.get(name)!.data[i]));
  return { metrics, scoreCalls: score.mock.calls.length, moved, probabilities };
}

describe('trainer.oldLogProbs', () => {
  test('rollout: the rollout log-probs are the PPO reference; no scoring pass, entropy from the update', async () => {
    const { metrics, scoreCalls, moved } = await updateWith('rollout');
    expect(scoreCalls).toBe(0);
    // Every token's ratio is e > 1.2 with a positive advantage: all clipped, no gradient, weights unchanged.
    expect(metrics['actor/policy/pg_clipfrac']).toBe(1);
    expect(moved).toBe(false);
    expect(metrics['rollout/policy/probs_diff_mean']).toBeUndefined();
    expect(metrics['actor/policy/entropy']).toBeGreaterThan(0);
  });

  test('recompute: the trainer scores the rows first; ratio 1, and the rollout gap is measured', async () => {
    const { metrics, scoreCalls, moved, probabilities } = await updateWith('recompute');
    expect(scoreCalls).toBe(1);
    expect(metrics['actor/policy/pg_clipfrac']).toBe(0);
    expect(moved).toBe(true);
    // |p - p / e| per token, from the logits in plain JavaScript.
    const gaps = probabilities.map((p) => p * (1 - Math.exp(-1)));
    expect(metrics['rollout/policy/probs_diff_mean']).toBeCloseTo(gaps.reduce((s, g) => s + g, 0) / gaps.length, 5);
    expect(metrics['rollout/policy/probs_diff_max']).toBeCloseTo(Math.max(...gaps), 5);
  });

  test('both report the same entropy before the update (one from scoring, one from the update forward pass)', async () => {
    const rollout = await updateWith('rollout');
    const recompute = await updateWith('recompute');
    expect(rollout.metrics['actor/policy/entropy']).toBeCloseTo(recompute.metrics['actor/policy/entropy']!, 5);
  });

  test('the phases are timed apart: timing/update/<group>/old_log_probs holds the scoring pass, optimizer_steps the update', async () => {
    const recompute = await updateWith('recompute', 300);
    const old = recompute.metrics['timing/update/policy/old_log_probs']!;
    const steps = recompute.metrics['timing/update/policy/optimizer_steps']!;
    expect(old).toBeGreaterThanOrEqual(0.3);
    expect(steps).toBeGreaterThan(0);
    const rollout = await updateWith('rollout', 300);
    expect(rollout.metrics['timing/update/policy/old_log_probs']).toBeUndefined();
    expect(rollout.metrics['timing/update/policy/optimizer_steps']).toBeGreaterThan(0);
  });
});

describe("trainer.oldLogProbs: 'current'", () => {
  test('the update divides by its own log-probs: no scoring pass, ratio 1 whatever the rollout gave, the step recompute takes', async () => {
    const current = await updateWith('current');
    expect(current.scoreCalls).toBe(0);
    // The rollout log-probs are the true ones minus 1 (a ratio of e against them): unread, nothing is clipped.
    expect(current.metrics['actor/policy/pg_clipfrac']).toBe(0);
    expect(current.metrics['actor/policy/ppo_kl']).toBe(0);
    expect(current.moved).toBe(true);
    expect(current.metrics['rollout/policy/probs_diff_mean']).toBeUndefined();
    expect(current.metrics['timing/update/policy/old_log_probs']).toBeUndefined();
    const recompute = await updateWith('recompute');
    // Recomputed old log-probs give a ratio of 1 up to rounding: the same loss and entropy.
    expect(current.metrics['actor/policy/loss']).toBeCloseTo(recompute.metrics['actor/policy/loss']!, 6);
    expect(current.metrics['actor/policy/grad_norm']).toBeCloseTo(recompute.metrics['actor/policy/grad_norm']!, 6);
    expect(current.metrics['actor/policy/entropy']).toBeCloseTo(recompute.metrics['actor/policy/entropy']!, 5);
  });
});

describe("trainer.oldLogProbs: 'current' is checked at load", () => {
  const kernelWith = (config: Record<string, unknown>) =>
    createKernel({
      cwd: process.cwd(),
      inline: { plugins: ['trainer', 'backend-tfjs', 'algorithms'], models: { policy: { model: 'tiny' } }, ...config },
    });
  test('a model that takes more than one optimizer step per batch is refused, naming the key and the settings', async () => {
    await expect(
      kernelWith({ agents: { solver: { train: { epochs: 2 } } }, algorithm: { advantage: 'grpo' }, trainer: { oldLogProbs: 'current' } }),
    ).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      key: 'trainer.oldLogProbs',
      message: expect.stringContaining('takes 2 (1 mini-batch x 2 epochs)'),
      hint: expect.stringContaining("'auto' (the default) or 'recompute'"),
    });
    await expect(
      kernelWith({ agents: { solver: { train: { epochs: 2 } } }, algorithm: { advantage: 'grpo' }, trainer: { oldLogProbs: 'current' } }),
    ).rejects.toMatchObject({ hint: expect.stringContaining('set train.epochs to 1 for agents solver') });
    await expect(
      kernelWith({ agents: { solver: {} }, algorithm: { advantage: 'grpo' }, trainer: { oldLogProbs: 'current' } }),
    ).resolves.toBeDefined();
  });
});

test("trainer.oldLogProbs 'auto': 'current' only for one optimizer step per batch sampled on the trainer's engine", () => {
  expect(oldLogProbSource('auto', { optimizerSteps: 1, samplesOnTrainer: true })).toBe('current');
  expect(oldLogProbSource('auto', { optimizerSteps: 2, samplesOnTrainer: true })).toBe('recompute');
  expect(oldLogProbSource('auto', { optimizerSteps: 1, samplesOnTrainer: false })).toBe('recompute');
  expect(oldLogProbSource('rollout', { optimizerSteps: 1, samplesOnTrainer: true })).toBe('rollout');
  expect(oldLogProbSource('recompute', { optimizerSteps: 1, samplesOnTrainer: true })).toBe('recompute');
});
