import { afterAll, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { runBin } from '../../../test/support/cliRunner.js';
import { toyProject } from './toyRollout.js';

/**
 * The whole loop (rollout, Dr. MAS advantages, PPO update per worker group, weight sync) on a task a policy can
 * learn: the outcome is the share of sampled token ids below 256. The tiny model's vocabulary has 512 ids and its
 * initial distribution is close to uniform, so a policy that learns nothing scores about 0.5.
 */
const project = toyProject('learning', {
  trainer: { steps: 25, seed: 11, logRollouts: 0 },
});
afterAll(() => project.dispose());

describe('the training loop learns', () => {
  test('reward rises from chance (about 0.5) to above 0.8 in 25 steps, and the policy entropy falls', () => {
    const runDir = project.path('run');
    const result = runBin(['train', '--run-dir', runDir], project.dir, 300_000);
    expect(result.code).toBe(0);
    const lines = readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, number>);
    const mean = (rows: Array<Record<string, number>>, key: string) => rows.reduce((s, r) => s + r[key]!, 0) / rows.length;
    const first = lines.slice(0, 5);
    const last = lines.slice(-5);
    expect(Math.abs(mean(first, 'outcome/mean') - 0.5)).toBeLessThan(0.1);
    expect(mean(last, 'outcome/mean')).toBeGreaterThan(0.8);
    for (const group of ['left', 'right']) {
      expect(mean(last, `actor/${group}/entropy`)).toBeLessThan(mean(first, `actor/${group}/entropy`));
    }
  });
});
