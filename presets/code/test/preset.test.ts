import { afterAll, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { runBin, type InfoReport } from '../../../test/support/cliRunner.js';
import { TempProject } from '../../../test/support/tempProject.js';

// The built CLI, as a user runs it: in-process under jest, a preset that imports @drmas/plugin-orchestra gets the
// package's sources while the `orchestra` plugin loaded by name runs from dist, and the two copies' Orchestra
// tokens differ (see the report of this branch).
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

  test('one training step on the tiny model: every episode is judged by its tests', () => {
    const runDir = scratch.path('one-step');
    const set = [
      'trainer.steps=1',
      'trainer.seed=3',
      'rollout.promptsPerStep=2',
      'rollout.samplesPerPrompt=2',
      'agents.coder.sampling.maxNewTokens=16',
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
    // An untrained model writes no working code: no test passes.
    expect(line['outcome/mean']).toBe(0);
  });
});
