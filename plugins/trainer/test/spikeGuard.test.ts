import { afterEach, describe, expect, test } from '@jest/globals';
import { createKernel, SeededRng, type Metrics, type WeightTensor } from '@drmas/core';
import { TfjsPolicyBackend } from '../../backend-tfjs/src/TfjsPolicyBackend.js';
import { selectRuntime } from '../../backend-tfjs/src/runtime/RuntimeSelector.js';
import { randomModel, tinyConfigJson } from '../../backend-tfjs/test/modelFixtures.js';
import { makeBatch } from '../../backend-tfjs/test/trainingFixtures.js';
import { GradNormSpikeGuard, SpikeGuards } from '../src/index.js';
import { updateWorkerGroup } from '../src/updateWorkerGroup.js';
import type { TrainedWorkerGroup } from '../src/WorkerGroupsService.js';
import { singleAgentGroup, vanillaPpoLoss } from './trainerFixtures.js';

const settings = (over: Partial<GradNormSpikeGuard['settings']> = {}) => ({
  action: 'skip' as const,
  window: 3,
  threshold: 3,
  warmup: 3,
  ...over,
});

describe('the gradient-norm z-score (hand-worked)', () => {
  test('z over the window of earlier norms; the window slides; only upward jumps past the threshold are spikes', () => {
    const guard = new GradNormSpikeGuard(settings());
    for (const norm of [1, 2, 3]) guard.record(norm);
    // mean 2, unbiased std 1
    expect(guard.check(6)).toEqual({ spike: true, z: 4, mean: 2, std: 1, count: 3 });
    expect(guard.check(4.9).spike).toBe(false);
    expect(guard.check(-100).spike).toBe(false);
    guard.record(4); // window [2, 3, 4]: mean 3, std 1
    expect(guard.check(6)).toMatchObject({ spike: false, z: 3 });
    expect(guard.check(6.01).spike).toBe(true);
  });

  test('no verdict during warm-up; a window of equal norms makes any larger norm a spike', () => {
    const guard = new GradNormSpikeGuard(settings());
    guard.record(1);
    guard.record(1);
    expect(guard.check(100)).toMatchObject({ spike: false, z: undefined });
    guard.record(1);
    expect(guard.check(1.0001).spike).toBe(true);
    expect(guard.check(1).spike).toBe(false);
  });

  test('the windows are checkpointed by worker group, and a damaged state is CHECKPOINT_INVALID', () => {
    const guards = new SpikeGuards(new Map([['policy', settings()]]));
    for (const norm of [1, 2, 3, 4]) guards.of('policy')!.record(norm);
    const saved = JSON.parse(JSON.stringify(guards.getState())) as unknown;
    expect(saved).toEqual({ policy: [2, 3, 4] });
    const resumed = new SpikeGuards(new Map([['policy', settings()]]));
    resumed.setState(saved);
    expect(resumed.of('policy')!.check(6)).toMatchObject({ z: 3, mean: 3 });
    expect(() => resumed.setState({ policy: [1, 'x'] })).toThrow(expect.objectContaining({ code: 'CHECKPOINT_INVALID' }));
  });
});

const loss = vanillaPpoLoss();
const backends: TfjsPolicyBackend[] = [];
afterEach(() => {
  for (const b of backends.splice(0)) b.dispose();
});

/** Eight identical turns; the last one's advantage is `spike` (a crafted gradient spike), the others 0.01. */
const PAIR: [number[], number[]] = [
  [3, 7, 1, 9],
  [12, 5, 20],
];

async function groupOn(miniBatches: number): Promise<{ group: TrainedWorkerGroup; backend: TfjsPolicyBackend }> {
  await selectRuntime('wasm');
  const backend = new TfjsPolicyBackend('tfjs', 'test', randomModel(tinyConfigJson('Qwen2ForCausalLM'), 3), undefined);
  backends.push(backend);
  const group = singleAgentGroup(backend, { lr: 1e-4, microBatchSize: 8, miniBatches });

  return { group, backend };
}

const equalWeights = (a: Map<string, WeightTensor>, b: Map<string, WeightTensor>) =>
  [...a].every(([name, t]) => Buffer.from(t.data.buffer).equals(Buffer.from(b.get(name)!.data.buffer)));

/** The norm of one optimizer step on normal rows only: what the guard's window is filled around. */
async function normalNorm(): Promise<number> {
  const { group } = await groupOn(1);
  const metrics: Metrics = {};
  await updateWorkerGroup(group, makeBatch([PAIR, PAIR, PAIR, PAIR], [0.01, 0.01, 0.01, 0.01]), {
    loss,
    rng: new SeededRng(0),
    metrics,
    lrScale: 1,
  });
  return metrics['actor/policy/grad_norm']!;
}

/** One training step of the eight turns with the guard's window around `n0`; `seed` shuffles the mini-batches. */
async function spikeStep(action: 'log' | 'skip' | 'rollback', miniBatches: number, n0: number, seed = 0) {
  const { group, backend } = await groupOn(miniBatches);
  const guard = new GradNormSpikeGuard({ action, window: 5, threshold: 10, warmup: 5 });
  guard.setState([0.96, 0.98, 1, 1.02, 1.04].map((f) => f * n0));
  const before = await backend.exportWeights();
  const metrics: Metrics = {};
  const logs: string[] = [];
  const view = makeBatch(
    Array.from({ length: 8 }, () => PAIR),
    [0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 1e4],
  );
  await updateWorkerGroup(group, view, {
    loss,
    rng: new SeededRng(seed),
    metrics,
    lrScale: 1,
    spikeGuard: { guard, log: (line) => logs.push(line), step: 7 },
  });
  const after = await backend.exportWeights();
  return { metrics, logs, unchanged: equalWeights(before, after), adamSteps: backend.trainer.optimizer.step, guard };
}

describe('models.<id>.spikeGuard on a crafted spike (one turn with a huge advantage), tiny model on tfjs', () => {
  let n0 = 0;
  test('the normal rows give a finite norm to fill the window around', async () => {
    n0 = await normalNorm();
    expect(n0).toBeGreaterThan(0);
  });

  test('skip, one mini-batch: the spike step is dropped; weights bitwise as before, no optimizer step, moments unallocated', async () => {
    const { metrics, logs, unchanged, adamSteps } = await spikeStep('skip', 1, n0);
    expect(metrics['actor/policy/spikes']).toBe(1);
    expect(unchanged).toBe(true);
    expect(adamSteps).toBe(0);
    expect(logs).toEqual([
      expect.stringMatching(/^gradient-norm spike in worker group policy at step 7, optimizer step 1: .*; skipped the optimizer step$/),
    ]);
  });

  // Seeds 0 and 1 shuffle the spiking turn into the second and the first mini-batch.
  test.each([0, 1])('skip, two mini-batches (seed %i): only the spiking one is dropped, the normal one is applied', async (seed) => {
    const { metrics, unchanged, adamSteps, guard } = await spikeStep('skip', 2, n0, seed);
    expect(metrics['actor/policy/spikes']).toBe(1);
    expect(metrics['actor/policy/updates']).toBe(2);
    expect(unchanged).toBe(false);
    expect(adamSteps).toBe(1);
    expect(guard.getState()[4]).not.toBe(1.04 * n0); // the normal step's norm entered the window, the spike's did not
  });

  test.each([0, 1])("rollback, two mini-batches (seed %i): the group returns to its state from before the step's update", async (seed) => {
    const { metrics, logs, unchanged, adamSteps } = await spikeStep('rollback', 2, n0, seed);
    expect(metrics['actor/policy/spikes']).toBe(1);
    expect(unchanged).toBe(true);
    expect(adamSteps).toBe(0);
    expect(logs[0]).toContain("rolled back to the weights and optimizer state from before this step's update");
  });

  test('log: the spike is counted and logged, and the step applied', async () => {
    const { metrics, logs, unchanged, adamSteps } = await spikeStep('log', 1, n0);
    expect(metrics['actor/policy/spikes']).toBe(1);
    expect(unchanged).toBe(false);
    expect(adamSteps).toBe(1);
    expect(logs[0]).toContain('kept the step (action log)');
  });
});

describe('spikeGuard settings', () => {
  test('a warm-up longer than the window is refused at load, under its key', async () => {
    await expect(
      createKernel({
        cwd: process.cwd(),
        inline: {
          plugins: ['trainer', 'backend-tfjs'],
          models: { policy: { model: 'tiny', spikeGuard: { window: 20, warmup: 30 } } },
          agents: { solver: {} },
        },
      }),
    ).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringContaining('models.policy.spikeGuard.warmup') });
  });
});
