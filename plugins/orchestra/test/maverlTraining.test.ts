import { afterAll, expect, test } from '@jest/globals';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { TempProject } from '../../../test/support/tempProject.js';
import { trainOneStep } from '../../../test/support/trainStep.js';

// MAVERL's runners train a step on the math preset (the tiny base checkpoint) through the built CLI, as a user runs them.
const scratch = new TempProject('maverl-training');
afterAll(() => scratch.dispose());

const trainStep = (name: string, settings: string[]) =>
  trainOneStep('examples/math/drmas.config.json', scratch.path(name), [
    'trainer.seed=1',
    'rollout.promptsPerStep=2',
    'rollout.samplesPerPrompt=2',
    'reward.allocator=per_turn',
    ...settings,
  ]);

describeSlow('MAVERL runners train a step on the math preset (slow)', () => {
  test('majority_vote: K = 3 solver turns per episode', () => {
    const line = trainStep('vote', ['orchestra.name=majority_vote', 'orchestra.solvers=3']);
    expect(line['agent/solver/turns']).toBe(12);
    expect(Number.isFinite(line['actor/policy/grad_norm'])).toBe(true);
  });

  test('summary: K = 2 solvers and a summarizer per episode', () => {
    const line = trainStep('summary', ['orchestra.name=summary', 'orchestra.solvers=2', 'agents.summarizer.model=policy']);
    expect([line['agent/solver/turns'], line['agent/summarizer/turns']]).toEqual([8, 4]);
    expect(Number.isFinite(line['actor/policy/grad_norm'])).toBe(true);
  });

  test('debate with a judge model: each debater once per round, then the judge', () => {
    const line = trainStep('debate', [
      'orchestra.name=debate',
      'orchestra.rounds=2',
      'orchestra.judge=model',
      'agents.pro.model=policy',
      'agents.con.model=policy',
      'agents.judge.model=policy',
      'agents.judge.sampling.maxNewTokens=16',
    ]);
    expect([line['agent/pro/turns'], line['agent/con/turns'], line['agent/judge/turns']]).toEqual([8, 8, 4]);
    expect(Number.isFinite(line['actor/policy/grad_norm'])).toBe(true);
  });
});
