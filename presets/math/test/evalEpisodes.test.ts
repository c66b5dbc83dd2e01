import { afterAll, describe, expect, test } from '@jest/globals';
import { runCli } from '../../../test/support/cliRunner.js';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { TempProject } from '../../../test/support/tempProject.js';

/** `drmas eval --episodes N` on the math preset: N episodes, one on each of the first N held-out tasks. */

const project = new TempProject('eval-episodes').write({
  'drmas.config.json': {
    presets: ['math'],
    models: { policy: { rollout: 'tfjs' } },
    trainer: { outputDir: 'runs' },
    report: { html: false, progress: 'off' },
  },
});
afterAll(() => project.dispose());

const evaluate = async (...args: string[]) => {
  const result = await runCli(['eval', '--json', ...args], project.dir);
  if (result.code !== 0) throw new Error(result.stderr);
  return JSON.parse(result.stdout) as Record<string, number>;
};

describe('drmas eval --episodes', () => {
  test('N episodes: N held-out tasks, each sampled once', async () => {
    const metrics = await evaluate('--episodes', '2', '--run-dir', 'runs/two');
    expect(metrics['val/tasks']).toBe(2);
    // Every episode starts with one solver turn, which the verifier checks.
    expect(metrics['val/agent/solver/turns']).toBeGreaterThanOrEqual(2);
    expect(Object.keys(metrics)).toContain('val/avg@1');
  }, 60_000);

  test('more episodes than held-out tasks is LIMIT_EXCEEDED naming --episodes; --k beside it is refused', async () => {
    const tooMany = await runCli(['eval', '--episodes', '65'], project.dir);
    expect(tooMany.code).toBe(1);
    expect(tooMany.stderr).toMatch(
      /error LIMIT_EXCEEDED \(--episodes\): --episodes 65: eval.tasks is 65, but the held-out split of environment math has 64 tasks/,
    );
    expect(tooMany.stderr).toMatch(/hint: give --episodes 64 or less, or give the environment more held-out tasks/);
    const both = await runCli(['eval', '--episodes', '3', '--k', '2'], project.dir);
    expect(both.stderr).toMatch(/error INVALID_ARGUMENT \(--k\): --episodes runs one episode per held-out task, so it takes no --k/);
  }, 60_000);
});

describeSlow('drmas eval --episodes (slow)', () => {
  test('is --k 1 with eval.tasks N: the same metrics', async () => {
    const { 'timing/evaluate': _a, ...episodes } = await evaluate('--episodes', '3', '--run-dir', 'runs/episodes');
    const { 'timing/evaluate': _b, ...spelled } = await evaluate('--k', '1', '--set', 'eval.tasks=3', '--run-dir', 'runs/spelled');
    expect(episodes['val/tasks']).toBe(3);
    expect(episodes).toEqual(spelled);
  }, 120_000);
});
