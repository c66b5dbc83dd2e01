import { afterAll, describe, expect, test } from '@jest/globals';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { runBin, type InfoReport } from '../../../test/support/cliRunner.js';
import { REPO_ROOT, TempProject } from '../../../test/support/tempProject.js';

// The built CLI, as a user runs it.
const scratch = new TempProject('preset-code');
afterAll(() => scratch.dispose());

describe('@drmas/preset-code', () => {
  test('drmas info lists the coder, the code orchestra and environment', () => {
    const { code, stdout, stderr } = runBin(['info', '--json', '--config', 'examples/code/drmas.config.json']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const report = JSON.parse(stdout) as InfoReport;
    expect(report.presets.map((p) => p.name)).toEqual(['@drmas/preset-code']);
    expect(report.sections.workflow).toMatchObject({ orchestra: 'code', agents: ['coder'], environment: 'code' });
  });

  test('ships a base checkpoint of at most 8 MB', () => {
    const file = path.join(REPO_ROOT, 'presets', 'code', 'checkpoints', 'base', 'policy', 'model.safetensors');
    expect(statSync(file).size).toBeLessThanOrEqual(8 * 1024 * 1024);
  });

  test('one training step from the base checkpoint: every episode is judged by its tests', () => {
    const runDir = scratch.path('one-step');
    const set = [
      'trainer.steps=1',
      'trainer.seed=3',
      'rollout.promptsPerStep=2',
      'rollout.samplesPerPrompt=2',
      'eval.atStart=false',
      'eval.atEnd=false',
      'report.html=false',
      'report.progress=off',
    ].flatMap((s) => ['--set', s]);
    const { code, stderr } = runBin(['train', '--config', 'examples/code/drmas.config.json', '--run-dir', runDir, ...set]);
    expect({ code, stderr: stderr.includes('error') ? stderr : '' }).toEqual({ code: 0, stderr: '' });
    const line = JSON.parse(readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8').trim().split('\n')[0]!) as Record<string, number>;
    expect(Number.isFinite(line['actor/policy/grad_norm'])).toBe(true);
    expect(line['agent/coder/turns']).toBe(4);
    // The base writes code in every answer; the outcome is the share of tests passed, so it equals env/tests_passed.
    expect(line['env/has_code']).toBe(1);
    expect(line['outcome/mean']).toBeCloseTo(line['env/tests_passed']!, 12);
  });
});
