import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { TempProject } from '../../../test/support/tempProject.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createKernel } from '@drmas/core';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { stableLines } from '../../../test/reliability/support/runFileComparison.js';
import { toyProject } from './toyRollout.js';

/**
 * The toy loop (two agents on models left and right) with GAE advantages from critics of the given learner, as a
 * project made when the block's tests start (a skipped slow block makes none) and removed after them.
 */
function withCritic(
  name: string,
  critic: Record<string, unknown>,
  trainer: Record<string, unknown>,
  engine: Record<string, unknown> = {},
): { readonly project: TempProject } {
  const holder: { project?: TempProject } = {};
  beforeAll(() => {
    holder.project = toyProject(name, {
      algorithm: { advantage: 'gae' },
      critic: { optimizer: { lr: 3e-3 }, ...critic },
      trainer: { seed: 11, logRollouts: 0, ...trainer },
      ...engine,
    });
  });
  afterAll(() => holder.project?.dispose());
  return holder as { readonly project: TempProject };
}

/** Both models (and so their critics) trained on onnx instead of tfjs. */
const ON_ONNX = {
  plugins: ['algorithms', 'backend-tfjs', 'backend-onnx', 'trainer', './toy-rollout.js'],
  models: {
    left: { model: 'tiny', backend: 'onnx', optimizer: { lr: 3e-3 } },
    right: { model: 'tiny', backend: 'onnx', optimizer: { lr: 3e-3 } },
  },
};

/** The run's metrics lines, time keys dropped (they differ between any two runs). */
const lines = (runDir: string) => stableLines(path.join(runDir, 'metrics.jsonl')).map((line) => JSON.parse(line) as Record<string, number>);

/** The toy task learned: the outcome of the first 5 steps near chance (0.5), of the last 5 above 0.8. */
function expectLearned(runDir: string): void {
  const all = lines(runDir);
  const mean = (rows: Array<Record<string, number>>) => rows.reduce((s, r) => s + r['outcome/mean']!, 0) / rows.length;
  expect(Math.abs(mean(all.slice(0, 5)) - 0.5)).toBeLessThan(0.1);
  expect(mean(all.slice(-5))).toBeGreaterThan(0.8);
}

/** Each file's sha256 in a checkpoint's manifest, by path. */
function manifest(runDir: string, step: number): Record<string, string> {
  const file = path.join(runDir, 'checkpoints', `step-${String(step).padStart(6, '0')}`, 'manifest.json');
  const { files } = JSON.parse(readFileSync(file, 'utf8')) as { files: Array<{ path: string; sha256: string }> };
  return Object.fromEntries(files.map((f) => [f.path, f.sha256]));
}

async function train(dir: string, runDir: string, options: { stopAfter?: number; resume?: string } = {}): Promise<void> {
  const { kernel } = await createKernel({ cwd: dir });
  const controller = new AbortController();
  if (options.stopAfter)
    kernel.hooks.afterStep.tap('test-stop', (result) => void (result.step === options.stopAfter && controller.abort()));
  await kernel.run({ runDir, resume: options.resume, signal: controller.signal, log: () => {} });
}

describe('PPO with GAE and critics on the toy loop', () => {
  const run = withCritic('critic-run', { learner: 'ppo', shareTrunk: true }, { steps: 1 });

  test('each worker group its critic (a head on its policy trunk): values start at 0, it learns from the returns, it is checkpointed', async () => {
    const runDir = run.project.path('run');
    await train(run.project.dir, runDir);
    const [line] = lines(runDir);
    for (const id of ['left', 'right']) {
      // The head starts at zero: every value of step 1 is 0, so the returns are the rewards and almost nothing is
      // explained (1 - var(R) / (var(R) + 1e-5)).
      expect(line![`critic/${id}/values/mean`]).toBe(0);
      expect(line![`critic/${id}/vf_explained_var`]).toBeGreaterThan(0);
      expect(line![`critic/${id}/vf_explained_var`]).toBeLessThan(0.01);
      // 0.5 x the token mean of R^2 with rewards (share of low ids) near 0.5.
      expect(line![`critic/${id}/vf_loss`]).toBeGreaterThan(0.05);
      expect(line![`critic/${id}/grad_norm`]).toBeGreaterThan(0);
      expect(line![`critic/${id}/updates`]).toBe(1);
      expect(line![`actor/${id}/grad_norm`]).toBeGreaterThan(0);
    }
    const files = Object.keys(manifest(runDir, 1)).filter((file) => file.startsWith('critics/'));
    // A shared trunk is the policy's, saved with it: the critic's folder holds its head and optimizer state alone.
    expect(files.sort()).toEqual(
      ['left', 'right'].flatMap((id) =>
        ['optimizer.json', 'optimizer.safetensors', 'value_head.safetensors'].map((f) => `critics/${id}/${f}`),
      ),
    );
  });
});

/**
 * A plugin whose engine is tfjs's, recording the value loss each critic update is handed in
 * `globalThis.__criticLosses`: an engine may build a graph per loss object (onnx does), so the trainer must hand the
 * same one at every step.
 */
const LOSS_RECORDER_PLUGIN = `
import { BackendFactory } from '@drmas/core';
import { tfjsBackendFactory } from '@drmas/plugin-backend-tfjs';
const losses = (globalThis.__criticLosses = []);
export default () => ({
  name: 'critic-loss-recorder',
  register(ctx) {
    ctx.provide(BackendFactory, 'recorder', {
      ...tfjsBackendFactory,
      name: 'recorder',
      async createCritic(options) {
        const critic = await tfjsBackendFactory.createCritic(options);
        const update = critic.update.bind(critic);
        critic.update = (request) => (losses.push(request.loss), update(request));
        return critic;
      },
    });
  },
  apply() {},
});
`;

describe("the critics' value loss", () => {
  const run = withCritic(
    'critic-loss',
    { learner: 'ppo' },
    { steps: 2 },
    {
      plugins: ['algorithms', 'backend-tfjs', 'trainer', './toy-rollout.js', './loss-recorder.js'],
      models: {
        left: { model: 'tiny', runtime: 'wasm', backend: 'recorder', optimizer: { lr: 3e-3 } },
        right: { model: 'tiny', runtime: 'wasm', backend: 'recorder', optimizer: { lr: 3e-3 } },
      },
    },
  );

  test('is one object for every critic at every step (a new one per step made the onnx critic a graph per step)', async () => {
    run.project.write({ 'loss-recorder.js': LOSS_RECORDER_PLUGIN });
    await train(run.project.dir, run.project.path('run'));
    const losses = (globalThis as { __criticLosses?: unknown[] }).__criticLosses!;
    // Two critics (left, right) x 2 steps.
    expect(losses).toHaveLength(4);
    expect(new Set(losses).size).toBe(1);
  });
});

describe("the critics' learning-rate schedule", () => {
  const run = withCritic(
    'critic-schedule',
    { learner: 'ppo', shareTrunk: true, optimizer: { lr: 3e-3, schedule: 'linear', warmupSteps: 1 } },
    { steps: 3 },
  );

  test('critic.optimizer.schedule and warmupSteps scale the critic lr over trainer.steps, as a model optimizer does', async () => {
    const runDir = run.project.path('run');
    await train(run.project.dir, runDir);
    // Warm-up over step 1 (scale 0/1), then linear to 0 over the 2 steps left: (3 - 1) / 2 = 1, (3 - 2) / 2 = 0.5.
    expect(lines(runDir).map((line) => line['critic/left/lr'])).toEqual([0, 3e-3, 1.5e-3]);
    // The policy's own rate stays constant (its optimizer sets no schedule).
    expect(lines(runDir).map((line) => line['actor/left/lr'])).toEqual([3e-3, 3e-3, 3e-3]);
  });
});

describe("the critics' spike guard", () => {
  // A threshold of 0.01 standard deviations: a step's norm above its window's mean is a spike, which the toy's
  // varying returns give within four steps.
  const spikeGuard = { action: 'skip', window: 3, warmup: 2, threshold: 0.01 };
  const run = withCritic('critic-spikes', { learner: 'ppo', shareTrunk: true, spikeGuard }, { steps: 4 });

  test('critic.spikeGuard skips a spiking critic step, logs and counts it, and checkpoints the windows', async () => {
    const runDir = run.project.path('run');
    const logs: string[] = [];
    const { kernel } = await createKernel({ cwd: run.project.dir });
    await kernel.run({ runDir, log: (line) => logs.push(line) });
    const all = lines(runDir);
    for (const id of ['left', 'right']) {
      const spikes = all.map((line) => line[`critic/${id}/spikes`]!);
      // No verdict before the window holds 2 norms; each spike is a skipped step (one optimizer step per training step).
      expect(spikes.slice(0, 2)).toEqual([0, 0]);
      expect(all.map((line) => line[`critic/${id}/skipped_steps`])).toEqual(spikes);
      const logged = logs.filter((line) => line.startsWith(`gradient-norm spike in critic ${id} at step `));
      expect(logged).toHaveLength(spikes.reduce((a, b) => a + b, 0));
      for (const line of logged)
        expect(line).toMatch(/optimizer step 1: norm [\d.e+-]+, z [\d.e+-]+ over the previous [23] norms .*; skipped the optimizer step$/);
    }
    expect(all.reduce((sum, line) => sum + line['critic/left/spikes']! + line['critic/right/spikes']!, 0)).toBeGreaterThan(0);
    // The windows: the accepted norms, at most 3 of them, each a step's critic/<id>/grad_norm that was no spike.
    const windows = JSON.parse(
      readFileSync(path.join(runDir, 'checkpoints', 'step-000004', 'critics', 'spike_guards.json'), 'utf8'),
    ) as Record<string, number[]>;
    for (const id of ['left', 'right']) {
      const accepted = all.filter((line) => line[`critic/${id}/spikes`] === 0).map((line) => line[`critic/${id}/grad_norm`]);
      expect(windows[id]).toEqual(accepted.slice(-3));
    }
  });

  test('a rollback is refused at critic.spikeGuard.action', async () => {
    await expect(createKernel({ cwd: run.project.dir, overrides: ['critic.spikeGuard={"action":"rollback"}'] })).rejects.toThrow(
      /critic\.spikeGuard\.action.*a critic has no rollback/,
    );
  });
});

describeSlow("the critics' spike guard across a resume (slow)", () => {
  const spikeGuard = { action: 'skip', window: 3, warmup: 2, threshold: 0.01 };
  const run = withCritic('critic-spikes-resume', { learner: 'ppo', shareTrunk: true, spikeGuard }, { steps: 4, saveEvery: 1, keepLast: 4 });

  test('the windows come back with the checkpoint: a run resumed after step 2 judges steps 3 and 4 as the uninterrupted run did', async () => {
    const { project } = run;
    const full = project.path('full');
    await train(project.dir, full);
    const resumed = project.path('resumed');
    await train(project.dir, resumed, { stopAfter: 2 });
    await train(project.dir, resumed, { resume: resumed });
    expect(lines(resumed)).toEqual(lines(full));
    expect(
      lines(full)
        .slice(2)
        .some((line) => line['critic/left/spikes'] === 1 || line['critic/right/spikes'] === 1),
    ).toBe(true);
  }, 180_000);
});

describeSlow('critics on the toy loop: resume and MAPPO', () => {
  const resume = withCritic('critic-resume', { learner: 'ppo' }, { steps: 2, saveEvery: 1, keepLast: 2 });
  const mappo = withCritic('critic-mappo', { learner: 'mappo' }, { steps: 1 });

  test('an interrupted run resumed equals the uninterrupted one: metrics, values, policy and critic weights', async () => {
    const { project } = resume;
    const full = project.path('full');
    await train(project.dir, full);
    expect(lines(full)[1]!['critic/left/values/mean']).not.toBe(0);
    const resumed = project.path('resumed');
    await train(project.dir, resumed, { stopAfter: 1 });
    expect(lines(resumed)).toHaveLength(1);
    await train(project.dir, resumed, { resume: resumed });
    expect(lines(resumed)).toEqual(lines(full));
    const saved = manifest(full, 2);
    const again = manifest(resumed, 2);
    const weights = Object.keys(saved).filter((file) => file.endsWith('.safetensors'));
    expect(weights).toEqual(expect.arrayContaining(['critics/left/model.safetensors', 'critics/right/value_head.safetensors']));
    for (const file of weights) expect([file, again[file]]).toEqual([file, saved[file]]);
  }, 180_000);

  test('MAPPO: one centralized critic learns from both agents', async () => {
    const runDir = mappo.project.path('run');
    await train(mappo.project.dir, runDir);
    const [line] = lines(runDir);
    expect(line!['critic/joint/updates']).toBe(1);
    expect(line!['critic/joint/grad_norm']).toBeGreaterThan(0);
    expect(Object.keys(line!).filter((key) => key.startsWith('critic/left'))).toEqual([]);
  });
});

describeSlow('PPO with GAE learns the toy task', () => {
  const learning = withCritic('critic-learning', { learner: 'ppo' }, { steps: 25, seed: 12 });
  test('reward rises from chance (about 0.5) to above 0.8 in 25 steps', async () => {
    const runDir = learning.project.path('run');
    await train(learning.project.dir, runDir);
    expectLearned(runDir);
  }, 300_000);
});

describe('QMIX credit on the toy loop', () => {
  const qmix = withCritic('critic-qmix', { learner: 'qmix', shareTrunk: true, mixer: { stateDim: 8, embedDim: 8 } }, { steps: 1 });

  test('per-role critics mixed into a team value: the mixer credits the turns, trains, and is checkpointed beside the critics', async () => {
    const runDir = qmix.project.path('run');
    await train(qmix.project.dir, runDir);
    const [line] = lines(runDir);
    for (const id of ['left', 'right']) {
      expect(line![`critic/${id}/updates`]).toBe(1);
      expect(line![`critic/mixer/weight/${id}`]).toBeGreaterThanOrEqual(0);
      expect(line![`actor/${id}/grad_norm`]).toBeGreaterThan(0);
    }
    expect(line!['critic/mixer/joint_steps']).toBeGreaterThan(0);
    expect(line!['critic/mixer/grad_norm']).toBeGreaterThan(0);
    expect(Object.keys(manifest(runDir, 1))).toContain('critics/mixer.json');
  });
});

describeSlow('VDN and QMIX credit on the toy loop: resume and learning', () => {
  const resume = withCritic(
    'critic-qmix-resume',
    { learner: 'qmix', mixer: { stateDim: 8, embedDim: 8 } },
    { steps: 2, saveEvery: 1, keepLast: 2 },
  );
  const learning = {
    vdn: withCritic('critic-vdn-learning', { learner: 'vdn' }, { steps: 25, seed: 12 }),
    qmix: withCritic('critic-qmix-learning', { learner: 'qmix' }, { steps: 25, seed: 12 }),
  };

  test("QMIX: an interrupted run resumed equals the uninterrupted one: metrics (the mixer's included) and the mixer's file", async () => {
    const { project } = resume;
    const full = project.path('full');
    await train(project.dir, full);
    const resumed = project.path('resumed');
    await train(project.dir, resumed, { stopAfter: 1 });
    await train(project.dir, resumed, { resume: resumed });
    expect(lines(resumed)).toEqual(lines(full));
    expect(lines(full)[1]!['critic/mixer/loss']).toBeGreaterThan(0);
    expect(manifest(resumed, 2)['critics/mixer.json']).toBe(manifest(full, 2)['critics/mixer.json']);
  }, 180_000);

  test.each(['vdn', 'qmix'] as const)(
    '%s: reward rises from chance (about 0.5) to above 0.8 in 25 steps',
    async (learner) => {
      const { project } = learning[learner];
      const runDir = project.path('run');
      await train(project.dir, runDir);
      expectLearned(runDir);
    },
    300_000,
  );
});

describeSlow('critics on onnx on the toy loop', () => {
  const run = withCritic('critic-onnx-run', { learner: 'ppo' }, { steps: 1 }, ON_ONNX);

  test('a critic of its own trunk per worker group trains on onnx and is checkpointed as on tfjs', async () => {
    const runDir = run.project.path('run');
    await train(run.project.dir, runDir);
    const [line] = lines(runDir);
    for (const id of ['left', 'right']) {
      expect(line![`critic/${id}/values/mean`]).toBe(0);
      expect(line![`critic/${id}/vf_loss`]).toBeGreaterThan(0.05);
      expect(line![`critic/${id}/grad_norm`]).toBeGreaterThan(0);
      expect(line![`critic/${id}/updates`]).toBe(1);
    }
    const config = JSON.parse(readFileSync(path.join(runDir, 'config.json'), 'utf8')) as { models: Record<string, { backend: string }> };
    expect(config.models.left!.backend).toBe('onnx');
    const files = Object.keys(manifest(runDir, 1)).filter((file) => file.startsWith('critics/left/'));
    expect(files).toEqual(expect.arrayContaining(['critics/left/model.safetensors', 'critics/left/value_head.safetensors']));
  });
});

describeSlow('critics on onnx on the toy loop: learning, and every learner', () => {
  const learning = withCritic('critic-onnx-learning', { learner: 'ppo' }, { steps: 25, seed: 12 }, ON_ONNX);
  const learners = {
    ippo: withCritic('critic-onnx-ippo', { learner: 'ippo' }, { steps: 1 }, ON_ONNX),
    mappo: withCritic('critic-onnx-mappo', { learner: 'mappo' }, { steps: 1 }, ON_ONNX),
    happo: withCritic('critic-onnx-happo', { learner: 'happo' }, { steps: 1 }, ON_ONNX),
    vdn: withCritic('critic-onnx-vdn', { learner: 'vdn', shareTrunk: true }, { steps: 1 }, ON_ONNX),
    qmix: withCritic('critic-onnx-qmix', { learner: 'qmix', mixer: { stateDim: 8, embedDim: 8 } }, { steps: 1 }, ON_ONNX),
  };

  test('PPO with GAE: reward rises from chance (about 0.5) to above 0.8 in 25 steps', async () => {
    const runDir = learning.project.path('run');
    await train(learning.project.dir, runDir);
    expectLearned(runDir);
  }, 300_000);

  test.each(Object.keys(learners) as (keyof typeof learners)[])(
    '%s: one step trains the critics and both policies',
    async (learner) => {
      const { project } = learners[learner];
      const runDir = project.path('run');
      await train(project.dir, runDir);
      const [line] = lines(runDir);
      const critics = learner === 'mappo' || learner === 'happo' ? ['joint'] : ['left', 'right'];
      for (const id of critics) {
        expect(line![`critic/${id}/updates`]).toBe(1);
        expect(line![`critic/${id}/grad_norm`]).toBeGreaterThan(0);
      }
      for (const id of ['left', 'right']) expect(line![`actor/${id}/grad_norm`]).toBeGreaterThan(0);
      if (learner === 'qmix' || learner === 'vdn') expect(line!['critic/mixer/joint_steps']).toBeGreaterThan(0);
    },
    120_000,
  );
});
