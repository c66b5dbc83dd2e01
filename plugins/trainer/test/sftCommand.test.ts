import { afterAll, describe, expect, test } from '@jest/globals';
import { existsSync } from 'node:fs';
import { runCli } from '../../../test/support/cliRunner.js';
import { TempProject } from '../../../test/support/tempProject.js';

const demonstrations = ['12+5=17.', '9-4=5.', '3*3=9.', '7+7=14.']
  .map((response, i) => JSON.stringify({ agent: 'solver', prompt: `Solve ${i}: `, response }))
  .join('\n');

const project = new TempProject('sft').write({
  'drmas.config.json': {
    plugins: ['algorithms', 'backend-tfjs', 'trainer'],
    models: { policy: { model: 'tiny', runtime: 'wasm', optimizer: { lr: 2e-3 } } },
    agents: { solver: { model: 'policy' } },
    trainer: { seed: 3, outputDir: 'runs' },
    report: undefined,
  },
  'demos.jsonl': `${demonstrations}\n`,
});
afterAll(() => project.dispose());

const sft = (...extra: string[]) => runCli(['sft', '--config', 'drmas.config.json', '--data', 'demos.jsonl', '--batch-size', '1', ...extra], project.dir);

/** The learning rate of each progress line, in step order. */
function loggedRates(stderr: string): number[] {
  return [...stderr.matchAll(/step \d+\/\d+: nll [\d.]+, lr ([\d.e+-]+)/g)].map((m) => Number(m[1]));
}

describe('drmas sft', () => {
  test('cosine schedule: lr = 2e-3 * (1 + cos(pi * k / 8)) / 2 over 8 steps without warm-up; the model is saved', async () => {
    const result = await sft('--epochs', '2', '--warmup-steps', '0', '--out', 'cosine');
    expect(result.code).toBe(0);
    // Hand-worked: cos(pi k / 8) for k = 0..7 is 1, .9239, .7071, .3827, 0, -.3827, -.7071, -.9239.
    const expected = [2e-3, 1.9239e-3, 1.7071e-3, 1.3827e-3, 1e-3, 0.6173e-3, 0.2929e-3, 0.0761e-3];
    const rates = loggedRates(result.stderr);
    expect(rates).toHaveLength(8);
    rates.forEach((rate, k) => expect(rate).toBeCloseTo(expected[k], 5));
    expect(existsSync(project.path('cosine', 'policy', 'model.safetensors'))).toBe(true);
  }, 120_000);

  test('constant schedule with a warm-up: linear from 0 over the warm-up steps, then the base rate', async () => {
    const result = await sft('--epochs', '1', '--schedule', 'constant', '--warmup-steps', '2', '--lr', '1e-3', '--out', 'constant');
    expect(result.code).toBe(0);
    expect(loggedRates(result.stderr)).toEqual([0, 0.5e-3, 1e-3, 1e-3]);
  }, 120_000);

  test('an unknown schedule is an error naming --schedule, before any training', async () => {
    const result = await sft('--schedule', 'linear');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/--schedule must be cosine or constant, got "linear"/);
    expect(result.stderr).not.toMatch(/step \d+/);
  });
});
