import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import path from 'node:path';
import { createKernel } from '@drmas/core';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { stableLines } from '../../../test/reliability/support/runFileComparison.js';
import type { TempProject } from '../../../test/support/tempProject.js';
import { toyProject } from './toyRollout.js';

/** The toy loop with GAE advantages from HAPPO's centralized critic; `config` replaces whole sections. */
function happoProject(name: string, config: Record<string, unknown>): { readonly project: TempProject } {
  const holder: { project?: TempProject } = {};
  beforeAll(() => {
    holder.project = toyProject(name, { algorithm: { advantage: 'gae' }, ...config });
  });
  afterAll(() => holder.project?.dispose());
  return holder as { readonly project: TempProject };
}

async function train(dir: string, runDir: string): Promise<Array<Record<string, number>>> {
  const { kernel } = await createKernel({ cwd: dir });
  await kernel.run({ runDir, log: () => {} });
  return stableLines(path.join(runDir, 'metrics.jsonl')).map((line) => JSON.parse(line) as Record<string, number>);
}

describeSlow('critic.learner: happo on the toy loop', () => {
  const own = happoProject('happo-own-models', {
    critic: { learner: 'happo', optimizer: { lr: 3e-3 }, happo: { order: ['right', 'left'] } },
    trainer: { steps: 1, seed: 11, logRollouts: 0 },
  });

  test('roles on models of their own: right then left, left trained with the M of right’s update, one centralized critic', async () => {
    const [line] = await train(own.project.dir, own.project.path('run'));
    expect([line!['happo/right/position'], line!['happo/left/position']]).toEqual([0, 1]);
    expect(line!['happo/right/factor_mean']).toBe(1);
    // Right's update moved its policy, so the ratios left trains with differ from 1 (within the clip [0.5, 2]).
    expect(line!['happo/left/factor_mean']).not.toBe(1);
    expect(line!['happo/left/factor_min']).toBeGreaterThanOrEqual(0.5);
    expect(line!['happo/left/factor_max']).toBeLessThanOrEqual(2);
    for (const id of ['left', 'right']) expect(line![`actor/${id}/updates`]).toBe(1);
    expect(line!['critic/joint/updates']).toBe(1);
  });
});

describe('critic.learner: happo with both roles on one model', () => {
  const shared = happoProject('happo-shared-model', {
    models: { policy: { model: 'tiny', runtime: 'wasm', optimizer: { lr: 3e-3 } } },
    agents: { left: { model: 'policy' }, right: { model: 'policy' } },
    critic: { learner: 'happo', optimizer: { lr: 3e-3 }, happo: { order: ['left', 'right'] } },
    trainer: { steps: 1, seed: 11, logRollouts: 0 },
  });

  test('sequential role updates on the same weights: one sub-step per role, metrics per role', async () => {
    const [line] = await train(shared.project.dir, shared.project.path('run'));
    for (const role of ['left', 'right']) expect(line![`actor/policy/${role}/updates`]).toBe(1);
    expect(line!['actor/policy/updates']).toBeUndefined();
    expect(line!['happo/right/factor_mean']).not.toBe(1);
    expect(line!['critic/joint/updates']).toBe(1);
  });
});

describeSlow('HAPPO and a role swap resume exactly', () => {
  const resume = happoProject('happo-resume', {
    critic: { learner: 'happo', optimizer: { lr: 3e-3 } },
    trainer: { steps: 3, seed: 4, logRollouts: 0, saveEvery: 1, keepLast: 3, roleSwap: { roles: ['left', 'right'], swapEvery: 1 } },
  });

  test('an interrupted run resumed equals the uninterrupted one: the random orders, the swaps, every metric', async () => {
    const { dir } = resume.project;
    const full = await train(dir, resume.project.path('full'));
    expect(full.map((line) => line['roleSwap/swapped'])).toEqual([0, 1, 0]);
    const resumedDir = resume.project.path('resumed');
    const { kernel } = await createKernel({ cwd: dir });
    const controller = new AbortController();
    kernel.hooks.afterStep.tap('test-stop', (result) => void (result.step === 1 && controller.abort()));
    await kernel.run({ runDir: resumedDir, signal: controller.signal, log: () => {} });
    const { kernel: again } = await createKernel({ cwd: dir });
    await again.run({ runDir: resumedDir, resume: resumedDir, log: () => {} });
    expect(stableLines(path.join(resumedDir, 'metrics.jsonl')).map((line) => JSON.parse(line) as Record<string, number>)).toEqual(full);
  }, 300_000);
});

describeSlow('HAPPO learns the toy task', () => {
  const learning = happoProject('happo-learning', {
    critic: { learner: 'happo', optimizer: { lr: 3e-3 } },
    trainer: { steps: 25, seed: 12, logRollouts: 0 },
  });
  test('reward rises from chance (about 0.5) to above 0.8 in 25 steps', async () => {
    const all = await train(learning.project.dir, learning.project.path('run'));
    const mean = (rows: Array<Record<string, number>>, key: string) => rows.reduce((s, r) => s + r[key]!, 0) / rows.length;
    expect(Math.abs(mean(all.slice(0, 5), 'outcome/mean') - 0.5)).toBeLessThan(0.1);
    expect(mean(all.slice(-5), 'outcome/mean')).toBeGreaterThan(0.8);
  }, 300_000);
});
