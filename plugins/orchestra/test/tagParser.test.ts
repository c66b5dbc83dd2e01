import { describe, expect, test } from '@jest/globals';
import { containsCjk, parseTaggedOutput, PromptedAgent, renderPrompt, splitThink } from '../src/index.js';
import { CharCodec } from './fixtures.js';

const verify = { tag: 'verify', values: ['approve', 'reject'] };
const answer = { tag: 'answer' };
const boxed = { tag: 'boxed' };

describe('parseTaggedOutput', () => {
  test('well-formed outputs give the action', () => {
    expect(parseTaggedOutput('<think>checking</think> fine. <verify>approve</verify>', verify)).toEqual({
      valid: true,
      action: { tag: 'verify', content: 'approve' },
    });
    expect(parseTaggedOutput('<verify> Reject </verify>', verify)).toEqual({ valid: true, action: { tag: 'verify', content: 'reject' } });
    expect(parseTaggedOutput('<think>hm</think><answer> Paris </answer>', answer).action).toEqual({ tag: 'answer', content: 'Paris' });
    expect(parseTaggedOutput('<think>1+1</think> so \\boxed{\\frac{1}{2}}', boxed).action).toEqual({
      tag: 'boxed',
      content: '\\frac{1}{2}',
    });
  });

  test('truncated outputs are invalid, with the cut noted', () => {
    expect(parseTaggedOutput('<think>let me see', verify)).toMatchObject({ valid: false, reason: 'unclosed <think>' });
    expect(parseTaggedOutput('<answer>Par', answer, 'length')).toEqual({
      valid: false,
      reason: 'unbalanced <answer> tags (cut at maxNewTokens)',
    });
    expect(parseTaggedOutput('so \\boxed{12', boxed)).toEqual({ valid: false, reason: 'unclosed \\boxed{}' });
  });

  test('missing or empty tags are invalid', () => {
    expect(parseTaggedOutput('I approve.', verify)).toEqual({ valid: false, reason: 'missing <verify>' });
    expect(parseTaggedOutput('the answer is 3', boxed)).toEqual({ valid: false, reason: 'missing \\boxed{}' });
    expect(parseTaggedOutput('<answer>  </answer>', answer)).toEqual({ valid: false, reason: 'empty <answer>' });
    expect(parseTaggedOutput('<verify>maybe</verify>', verify)).toMatchObject({
      valid: false,
      reason: expect.stringContaining('not one of approve, reject'),
    });
    expect(parseTaggedOutput('no think here <answer>x</answer>', { tag: 'answer', requireThink: true })).toEqual({
      valid: false,
      reason: 'missing <think>',
    });
  });

  test('adversarial: nested, duplicated, reversed tags and tags inside <think>', () => {
    expect(parseTaggedOutput('<answer><answer>x</answer></answer>', answer).valid).toBe(false);
    expect(parseTaggedOutput('<verify>approve</verify><verify>reject</verify>', verify)).toEqual({
      valid: false,
      reason: 'more than one <verify>',
    });
    expect(parseTaggedOutput('</answer>x<answer>', answer)).toEqual({ valid: false, reason: '</answer> before <answer>' });
    // a verdict written while thinking does not count
    expect(parseTaggedOutput('<think>I could say <verify>approve</verify></think> no verdict', verify)).toEqual({
      valid: false,
      reason: 'missing <verify>',
    });
    expect(parseTaggedOutput('<think>\\boxed{1}</think> answer: \\boxed{2}', boxed).action).toEqual({ tag: 'boxed', content: '2' });
    expect(parseTaggedOutput('<think>a</think><think>b</think><answer>x</answer>', answer)).toEqual({
      valid: false,
      reason: 'more than one <think> block',
    });
    expect(parseTaggedOutput('</think><think><answer>x</answer>', answer)).toEqual({ valid: false, reason: '</think> before <think>' });
    expect(parseTaggedOutput('stray </think> <answer>x</answer>', answer)).toEqual({ valid: false, reason: '</think> without <think>' });
    expect(parseTaggedOutput(undefined as unknown as string, answer).valid).toBe(false);
  });

  test('CJK characters make a turn invalid (Dr. MAS)', () => {
    expect(parseTaggedOutput('<think>答案是</think><answer>Paris</answer>', answer)).toEqual({
      valid: false,
      reason: 'contains CJK characters',
    });
    expect(parseTaggedOutput('<answer>東京</answer>', answer).valid).toBe(false);
    expect(containsCjk('café, naïve, Ångström, ß')).toBe(false);
    expect(containsCjk('한국어')).toBe(true);
  });

  test('splitThink returns the text outside the think block', () => {
    expect(splitThink('a<think>b</think>c')).toEqual({ outside: 'ac' });
  });
});

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
