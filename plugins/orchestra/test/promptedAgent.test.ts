import { describe, expect, test } from '@jest/globals';
import { PromptedAgent, renderPrompt } from '../src/index.js';
import { CharCodec } from './fixtures.js';

describe('PromptedAgent', () => {
  const agent = new PromptedAgent({
    role: 'critic',
    prompt: 'Q: {question}\n{team_context}\nStep {step}: \\boxed{} {unknown}',
    tag: 'verify',
    values: ['approve', 'reject'],
    system: 'Be brief.',
  });

  test('fills known placeholders and leaves other braces alone', () => {
    expect(renderPrompt('{a} \\frac{x}{y} {b}', { a: '1' })).toBe('1 \\frac{x}{y} {b}');
    expect(agent.prompt({ question: '1+1?', team_context: '', step: '1' })).toBe('Q: 1+1?\n\nStep 1: \\boxed{} {unknown}');
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
