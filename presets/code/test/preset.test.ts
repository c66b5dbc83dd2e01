import { afterAll, describe, expect, test } from '@jest/globals';
import { baseCheckpointBytes, infoOf, trainOneStep } from '../../../test/support/presetChecks.js';
import { TempProject } from '../../../test/support/tempProject.js';

// The built CLI, as a user runs it.
const scratch = new TempProject('preset-code');
afterAll(() => scratch.dispose());

describe('@drmas/preset-code', () => {
  test('drmas info lists the coder, the code orchestra and environment', () => {
    const report = infoOf('examples/code/drmas.config.json');
    expect(report.presets.map((p) => p.name)).toEqual(['@drmas/preset-code']);
    expect(report.sections.workflow).toMatchObject({ orchestra: 'code', agents: ['coder'], environment: 'code' });
  });

  test('ships a base checkpoint of at most 8 MB', () => {
    expect(baseCheckpointBytes('code')).toBeLessThanOrEqual(8 * 1024 * 1024);
  });

  test('one training step from the base checkpoint: every episode is judged by its tests', () => {
    const line = trainOneStep('examples/code/drmas.config.json', scratch.path('one-step'), [
      'trainer.seed=3',
      'rollout.promptsPerStep=2',
      'rollout.samplesPerPrompt=2',
    ]);
    expect(Number.isFinite(line['actor/policy/grad_norm'])).toBe(true);
    expect(line['agent/coder/turns']).toBe(4);
    // The base writes code in every answer; the outcome is the share of tests passed, so it equals env/tests_passed.
    expect(line['env/has_code']).toBe(1);
    expect(line['outcome/mean']).toBeCloseTo(line['env/tests_passed']!, 12);
  });
});
