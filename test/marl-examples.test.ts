import { afterAll, describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createKernel } from '@drmas/core';
import { describeSlow } from './support/describeSlow.js';
import { REPO_ROOT, TempProject } from './support/tempProject.js';

/**
 * Every config in examples/marl trains one step of the math preset's base checkpoint (the tiny model): four prompts,
 * two samples, no evaluation; at seed 1 the rewards differ within groups, so each estimator's advantages reach the
 * loss (a gradient norm above 0). What each tool (and each critic-based learner) must show in that step's metrics is checked beside it.
 */
const DIR = path.join(REPO_ROOT, 'examples', 'marl');
const CONFIGS = readdirSync(DIR).filter((name) => name.endsWith('.config.json'));
const SMALL = [
  'rollout.promptsPerStep=4',
  'rollout.samplesPerPrompt=2',
  'eval.atEnd=false',
  'report.html=false',
  'report.progress=off',
  'trainer.steps=1',
  'trainer.seed=1',
];
/**
 * More samples where the small step leaves a group without a learning signal: with CORY's collective reward both turns
 * of an episode score the same, and at two samples per prompt (seed 1) one of the two copies had only tied groups.
 */
const MORE: Record<string, string[]> = { 'cory.config.json': ['rollout.samplesPerPrompt=4'] };
const scratch = new TempProject('marl-examples');
afterAll(() => scratch.dispose());

/** The states a checkpoint of the run's one step saved (`trainer_state.json`). */
const savedStates = (runDir: string) =>
  (
    JSON.parse(readFileSync(path.join(runDir, 'checkpoints', 'step-000001', 'trainer_state.json'), 'utf8')) as {
      states: Record<string, unknown>;
    }
  ).states;

const CHECKS: Record<string, (line: Record<string, number>, runDir: string) => void> = {
  'frozen-verifier.config.json': (line) => {
    expect(line['actor/verifier/frozen_rows']).toBeGreaterThan(0);
    expect(line['actor/verifier/updates']).toBeUndefined();
    expect(line['actor/solver/updates']).toBe(1);
  },
  'spike-guard.config.json': (line, runDir) => {
    expect(line['actor/policy/spikes']).toBe(0);
    // The step's one optimizer step (in warm-up) entered the window, which the checkpoint keeps.
    expect(savedStates(runDir)['trainer/spikeGuards']).toEqual({ policy: [line['actor/policy/grad_norm']] });
  },
  'rae.config.json': (_line, runDir) => {
    const baselines = (savedStates(runDir)['algorithms/estimators'] as { rae: Record<string, number> }).rae;
    expect(Object.keys(baselines).sort()).toEqual(['solver', 'verifier']);
  },
};

/** One step of each critic: one optimizer step on a positive value loss. */
const criticsTrained = (line: Record<string, number>, ids: string[]) => {
  expect(
    Object.keys(line)
      .filter((key) => key.endsWith('/updates') && key.startsWith('critic/'))
      .sort(),
  ).toEqual(ids.map((id) => `critic/${id}/updates`));
  for (const id of ids) {
    expect(line[`critic/${id}/updates`]).toBe(1);
    expect(line[`critic/${id}/vf_loss`]).toBeGreaterThan(0);
    expect(line[`critic/${id}/grad_norm`]).toBeGreaterThan(0);
  }
};

/**
 * The checks of configs that run with the slow tests (a critic's step was ~25 s on tfjs; `backend: auto` now trains them
 * on onnx where it loads; plugins/trainer's criticRun test has a fast one).
 */
const SLOW_CHECKS: Record<string, (line: Record<string, number>, runDir: string) => void> = {
  'ppo-gae.config.json': (line, runDir) => {
    criticsTrained(line, ['policy']);
    expect(readdirSync(path.join(runDir, 'checkpoints', 'step-000001', 'critics', 'policy'))).toContain('value_head.safetensors');
  },
  'ippo.config.json': (line) => criticsTrained(line, ['solver', 'verifier']),
  'mappo.config.json': (line) => criticsTrained(line, ['joint']),
  'cory.config.json': (line) => {
    // Step 1 plays each role on its own copy (the swap comes after swapEvery steps); both copies train.
    expect(line['roleSwap/swapped']).toBe(0);
    for (const id of ['pioneer', 'observer']) expect(line[`actor/${id}/updates`]).toBe(1);
    expect(line['agent/observer/turns']).toBe(line['agent/pioneer/turns']);
  },
  'vdn.config.json': (line) => {
    criticsTrained(line, ['solver', 'verifier']);
    expect(line['critic/mixer/joint_steps']).toBe(line['episode/count']);
    // VDN's dQ_tot/dV_k is 1 for each role; an episode of the math preset is one joint step (its turns share round 0).
    expect(line['critic/mixer/weight/solver']).toBe(1);
    expect(line['critic/mixer/weight/verifier']).toBe(1);
  },
  'qmix.config.json': (line, runDir) => {
    criticsTrained(line, ['solver', 'verifier']);
    expect(line['critic/mixer/grad_norm']).toBeGreaterThan(0);
    expect(line['critic/mixer/weight/solver']).toBeGreaterThanOrEqual(0);
    expect(readdirSync(path.join(runDir, 'checkpoints', 'step-000001', 'critics'))).toContain('mixer.json');
  },
  'happo.config.json': (line) => {
    criticsTrained(line, ['joint']);
    // Both roles updated, one after the other: positions 0 and 1 in the step's random order, the first with M = 1.
    expect([line['happo/solver/position'], line['happo/verifier/position']].sort()).toEqual([0, 1]);
    const first = line['happo/solver/position'] === 0 ? 'solver' : 'verifier';
    expect(line[`happo/${first}/factor_mean`]).toBe(1);
  },
};

describe('examples/marl', () => {
  test('has a config for each credit tool', () => {
    expect(CONFIGS.sort()).toEqual([
      'cory.config.json',
      'drmas.config.json',
      'frozen-verifier.config.json',
      'grpo.config.json',
      'happo.config.json',
      'ippo.config.json',
      'magrpo.config.json',
      'mappo.config.json',
      'marloo.config.json',
      'per-agent-statistics-only.config.json',
      'per-turn-averaging-only.config.json',
      'ppo-gae.config.json',
      'qmix.config.json',
      'rae.config.json',
      'role-estimators.config.json',
      'spike-guard.config.json',
      'vdn.config.json',
    ]);
  });
});

/** One step of `name`: a positive gradient norm per trained group, finite advantages, and the tool's own check. */
async function trainsAStep(name: string): Promise<void> {
  const { kernel } = await createKernel({ cwd: REPO_ROOT, configPath: path.join(DIR, name), overrides: [...SMALL, ...(MORE[name] ?? [])] });
  const runDir = scratch.path(name);
  await kernel.run({ runDir, log: () => {} });
  const line = JSON.parse(readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n')[0]!) as Record<string, number>;
  const gradNorms = Object.keys(line).filter((key) => /^actor\/[^/]+\/grad_norm$/.test(key));
  expect(gradNorms.length).toBeGreaterThan(0);
  for (const key of gradNorms) expect(line[key]).toBeGreaterThan(0);
  expect(Number.isFinite(line['advantage/mean'])).toBe(true);
  (CHECKS[name] ?? SLOW_CHECKS[name])?.(line, runDir);
}

// The configs whose step shows something of its own run by default; the estimators of the others have hand-worked
// tests in plugins/algorithms, so their example runs with the slow tests.
describe('examples/marl: the configs with a check of their own', () => {
  test.each(Object.keys(CHECKS))('%s trains a step of the math preset', trainsAStep);
});

describeSlow('examples/marl: every other config', () => {
  test.each(CONFIGS.filter((name) => !(name in CHECKS)))('%s trains a step of the math preset', trainsAStep);
});
