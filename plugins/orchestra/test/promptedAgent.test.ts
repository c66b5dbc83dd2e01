import { describe, expect, test } from '@jest/globals';
import type { EnvAction, Environment, Episode } from '@drmas/core';
import { call, defineOrchestra, NO_ACTION, PromptedAgent, renderPrompt } from '../src/index.js';
import { CharCodec, scriptedRunner } from './fixtures.js';

describe('PromptedAgent', () => {
  const agent = new PromptedAgent({
    role: 'critic',
    prompt: 'Q: {question}\n{team_context}\nStep {round}: \\boxed{} {unknown}',
    tag: 'verify',
    values: ['approve', 'reject'],
    system: 'Be brief.',
  });

  test('fills known placeholders and leaves other braces alone', () => {
    expect(renderPrompt('{a} \\frac{x}{y} {b}', { a: '1' })).toBe('1 \\frac{x}{y} {b}');
    expect(agent.prompt({ question: '1+1?', team_context: '', round: '1' })).toBe('Q: 1+1?\n\nStep 1: \\boxed{} {unknown}');
  });

  test('formats a fresh single-turn chat when the codec has a template, else the raw prompt', () => {
    expect(agent.format('hi', new CharCodec('toy'))).toEqual({
      text: '[system]Be brief.[/system][user]hi[/user][assistant]',
      templated: true,
    });
    expect(agent.format('hi', new CharCodec())).toEqual({ text: 'hi', templated: false });
  });

  test('bad options are a DrmasError naming agents.<role>', () => {
    expect(() => new PromptedAgent({ role: 'critic', tag: 'verify' })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', key: 'agents.critic.prompt' }),
    );
    expect(() => new PromptedAgent({ role: 'critic', prompt: 'x', tag: 'verify', sampling: { temperature: -1 } })).toThrow(
      expect.objectContaining({ key: 'agents.critic.sampling.temperature' }),
    );
  });
});

describe('the round in prompts', () => {
  test('{round} (1-based) and {max_rounds}, and the deprecated {step} and {max_steps} with the same values', async () => {
    const task = { id: 'q', dataSource: 'd' };
    // An episode that never ends by itself, so it runs env.maxRounds = 3 rounds.
    const environment: Environment = {
      name: 'open',
      maxRounds: 3,
      init: async () => {},
      batch: () => ({ tasks: [task], nextCursor: 1 }),
      test: () => [],
      reset: (t): Episode => ({ task: t, done: false, outcome: 0, observation: () => '', variables: () => ({}), metrics: () => ({}) }),
      advance: async (_episodes: Episode[], _actions: EnvAction[]) => {},
    };
    const orchestra = defineOrchestra({
      name: 'rounds',
      agents: { solver: { prompt: 'round {round} of {max_rounds}; step {step} of {max_steps}|', tag: 'boxed' } },
      round: call('solver'),
      action: () => NO_ACTION,
    });
    const prompts: string[] = [];
    const { runner } = scriptedRunner(orchestra, environment, {
      solver: (prompt) => {
        prompts.push(prompt.slice(0, prompt.indexOf('|')));
        return '\\boxed{1}';
      },
    });
    await runner.run({ tasks: [task], samplesPerTask: 1, seed: 0, idPrefix: 't' });
    expect(prompts).toEqual(['round 1 of 3; step 1 of 3', 'round 2 of 3; step 2 of 3', 'round 3 of 3; step 3 of 3']);
  });
});
