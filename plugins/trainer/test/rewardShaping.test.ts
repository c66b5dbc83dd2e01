import { afterAll, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { runBin } from '../../../test/support/cliRunner.js';
import { toyProject } from './toyRollout.js';

/** The README's reward-shaping plugin: each turn's reward minus 0.01 per response token, after the rollout's own. */
const LENGTH_PENALTY = `
export default () => ({
  name: 'length-penalty',
  apply(kernel) {
    kernel.hooks.reward.tapPromise('length-penalty', async (batch) => {
      for (const t of batch.trajectories) for (const turn of t.turns) turn.reward = (turn.reward ?? 0) - 0.01 * turn.responseIds.length;
      return batch;
    });
  },
});
`;

const PLUGINS = ['algorithms', 'backend-tfjs', 'trainer', './toy-rollout.js'];
const project = toyProject('reward-shaping', { trainer: { steps: 1, seed: 5, logRollouts: 64 }, report: undefined });
project.write({ 'length-penalty.js': LENGTH_PENALTY });
afterAll(() => project.dispose());

function runOneStep(name: string, plugins: string[]) {
  const config = JSON.parse(readFileSync(project.path('drmas.config.json'), 'utf8')) as Record<string, unknown>;
  project.write({ [`${name}.json`]: { ...config, plugins } });
  const runDir = project.path(name);
  const result = runBin(['train', '--config', `${name}.json`, '--run-dir', runDir], project.dir, 300_000);
  expect(result.code).toBe(0);
  const metrics = JSON.parse(readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8').trim()) as Record<string, number>;
  const rows = readFileSync(path.join(runDir, 'rollouts.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { reward: number; outcome: number; responseTokens: number; trajectoryId: string });
  return { metrics, rows };
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe('outcome/* and reward/*', () => {
  test('a reward-shaping tap moves reward/* (the turn rewards the estimator sees) and leaves outcome/* alone', () => {
    const plain = runOneStep('plain', PLUGINS);
    const shaped = runOneStep('shaped', [...PLUGINS, './length-penalty.js']);
    // The toy rollout: 2 groups x 4 episodes x 2 turns, every turn rewarded with its episode's outcome.
    expect(plain.rows).toHaveLength(16);
    const outcomes = [...new Map(plain.rows.map((r) => [r.trajectoryId, r.outcome])).values()];
    expect(outcomes).toHaveLength(8);
    for (const run of [plain, shaped]) {
      expect(run.metrics['outcome/mean']).toBeCloseTo(mean(outcomes), 12);
      expect(run.metrics['outcome/min']).toBe(Math.min(...outcomes));
      expect(run.metrics['outcome/max']).toBe(Math.max(...outcomes));
    }
    // Unshaped, a turn's reward is its outcome: with two turns per episode the means agree.
    expect(plain.metrics['reward/mean']).toBeCloseTo(mean(outcomes), 12);
    // Shaped: the outcome minus 0.01 per response token, turn by turn, as the plugin says.
    const expected = shaped.rows.map((r) => r.outcome - 0.01 * r.responseTokens);
    shaped.rows.forEach((r, i) => expect(r.reward).toBeCloseTo(expected[i]!, 12));
    expect(shaped.metrics['reward/mean']).toBeCloseTo(mean(expected), 12);
    expect(shaped.metrics['reward/min']).toBeCloseTo(Math.min(...expected), 12);
    expect(shaped.metrics['reward/max']).toBeCloseTo(Math.max(...expected), 12);
    expect(shaped.metrics['reward/mean']).toBeLessThan(plain.metrics['reward/mean']! - 0.005);
  });
});
