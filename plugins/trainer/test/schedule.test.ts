import { afterAll, describe, expect } from '@jest/globals';
import { testSlow } from '../../../test/support/describeSlow.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { runBin } from '../../../test/support/cliRunner.js';
import { toyProject } from './toyRollout.js';

const project = toyProject('schedule', {
  models: {
    left: { model: 'tiny', runtime: 'wasm', optimizer: { lr: 1e-3, schedule: 'cosine', warmupSteps: 2 } },
    right: { model: 'tiny', runtime: 'wasm', optimizer: { lr: 2e-3, schedule: 'linear' } },
  },
  agents: { left: { model: 'left', train: { miniBatches: 2 } }, right: { model: 'right' } },
  trainer: { steps: 6, seed: 3, logRollouts: 0 },
});
afterAll(() => project.dispose());

describe('learning-rate schedules in drmas train', () => {
  testSlow('cosine after a warm-up and linear decay, by training step, as transformers computes them (slow)', () => {
    const runDir = project.path('run');
    const result = runBin(['train', '--run-dir', runDir], project.dir, 300_000);
    expect(result.stderr).not.toContain('INTERNAL');
    expect(result.code).toBe(0);
    const lines = readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, number>);
    expect(lines.map((l) => l.step)).toEqual([1, 2, 3, 4, 5, 6]);
    // Step s (1-based) uses index i = s - 1. Cosine, warm-up 2 of 6: i/2 for i < 2, then 0.5 (1 + cos(pi (i - 2) / 4)).
    const cosine = [0, 0.5, 1, 0.5 * (1 + Math.cos(Math.PI / 4)), 0.5, 0.5 * (1 + Math.cos((3 * Math.PI) / 4))];
    // Linear, no warm-up: (6 - i) / 6.
    const linear = [1, 5 / 6, 4 / 6, 3 / 6, 2 / 6, 1 / 6];
    lines.forEach((line, i) => {
      expect(line['actor/left/lr']).toBeCloseTo(1e-3 * cosine[i]!, 12);
      expect(line['actor/right/lr']).toBeCloseTo(2e-3 * linear[i]!, 12);
    });
    // Both mini-batches of a step share the step's rate (two optimizer steps, one schedule step).
    expect(lines[2]!['actor/left/updates']).toBe(2);
  });
});
