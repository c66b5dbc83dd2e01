import { describe, expect, test } from '@jest/globals';
import { containsCjk, parseTaggedOutput, splitThink } from '@drmas/core';

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
