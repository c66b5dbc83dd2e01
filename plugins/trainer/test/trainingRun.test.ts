import { afterAll, describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { listCheckpoints } from '@drmas/core';
import { runBin } from '../../../test/support/cliRunner.js';
import { toyProject } from './toyRollout.js';

const project = toyProject('training-run', {
  agents: { left: { model: 'left', train: { microBatchSize: 4, miniBatches: 2 } }, right: { model: 'right' } },
  trainer: { steps: 4, seed: 11, saveEvery: 1, keepLast: 2 },
  report: undefined,
});
afterAll(() => project.dispose());

const VOLATILE = /^(timing\/|perf\/)/;
function stableLines(runDir: string): Array<Record<string, number>> {
  return readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => Object.fromEntries(Object.entries(JSON.parse(line) as Record<string, number>).filter(([k]) => !VOLATILE.test(k))));
}

// Kills and resumes: test/reliability/killResume.test.ts; damaged checkpoints: test/reliability/checkpoints.test.ts.
describe('a training run with the trainer plugin', () => {
  const full = project.path('full');
  test('trains two non-shared worker groups, logs per-group metrics, rollouts and checkpoints', () => {
    const result = runBin(['train', '--run-dir', full], project.dir, 300_000);
    expect(result.stderr).toContain('worker group left: agents left');
    expect(result.code).toBe(0);
    const lines = stableLines(full);
    expect(lines.map((l) => l.step)).toEqual([1, 2, 3, 4]);
    for (const key of [
      'outcome/mean',
      'outcome/std',
      'reward/mean',
      'reward/std',
      'actor/left/grad_norm',
      'actor/right/grad_norm',
      'actor/left/loss',
      'actor/left/lr',
      'actor/left/pg_clipfrac',
      'actor/left/ppo_kl',
      'actor/left/entropy',
      'actor/left/zero_adv_rows_skipped',
      'rollout/left/probs_diff_mean',
      'agent/left/valid_fraction',
      'agent/right/response_length_mean',
      'advantage/frac_reward_zero_std',
    ]) {
      expect(typeof lines[0]![key]).toBe('number');
    }
    expect(lines[0]!['actor/left/entropy']).toBeGreaterThan(0);
    expect(lines[0]!['actor/left/updates']).toBe(2);
    expect(lines[0]!['actor/right/updates']).toBe(1);
    // the trainer engine is the rollout engine here: old log-probs equal the sampled ones up to kernel differences
    expect(lines[0]!['rollout/left/probs_diff_max']).toBeLessThan(1e-3);
    expect(listCheckpoints(full).map((c) => c.step)).toEqual([3, 4]);
    const ckpt = listCheckpoints(full)[1]!.dir;
    expect(readdirSync(path.join(ckpt, 'left')).sort()).toEqual(
      expect.arrayContaining(['config.json', 'model.safetensors', 'optimizer.json', 'optimizer.safetensors']),
    );
    const rollouts = readFileSync(path.join(full, 'rollouts.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rollouts[0]).toMatchObject({ step: 1, agent: 'left', valid: true });
    expect(typeof rollouts[0]?.advantage).toBe('number');
  });
});
