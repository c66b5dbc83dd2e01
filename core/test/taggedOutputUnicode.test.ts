import { describe, expect, test } from '@jest/globals';
import { parseTaggedOutput, splitThink } from '@drmas/core';

const answer = { tag: 'answer' };
const verify = { tag: 'verify', values: ['approve', 'reject'] };
const boxed = { tag: 'boxed' };

// Tags were found in a lower-cased copy and the original was cut at those offsets: wherever lower-casing changes a
// string's length (İ, U+0130, becomes i + U+0307), the action came out shifted. Expected values are by hand.
describe('tags are found at their place in the text itself', () => {
  test.each<[string, string, string]>([
    ['İ before the tag', 'İ<answer>Paris</answer>', 'Paris'],
    ['İ inside the tag', '<answer>İstanbul</answer>', 'İstanbul'],
    ['many İ before', `${'İ'.repeat(50)}<answer>Ankara</answer>`, 'Ankara'],
    ['Turkish dotless and dotted i', 'ı İ i I <answer>Iğdır</answer>', 'Iğdır'],
    ['ß and ẞ (U+1E9E lower-cases to ß)', 'straße STRAẞE <answer>Groß</answer>', 'Groß'],
    ['the ﬃ ligature (upper-cases to FFI)', 'oﬃce <answer>eﬃcient</answer>', 'eﬃcient'],
    ['combining marks', 'cafe\u0301 <answer>nai\u0308ve</answer>', 'nai\u0308ve'],
    ['astral-plane emoji', '😀<answer>🎉 party</answer>😀', '🎉 party'],
    ['lone surrogates around and inside', '\ud83d<answer>\udc00x\ud83d</answer>\udc00', '\udc00x\ud83d'],
    ['upper-case tags still match', 'İ<ANSWER>Paris</Answer>', 'Paris'],
  ])('%s', (_, text, content) => {
    expect(parseTaggedOutput(text, answer)).toEqual({ valid: true, action: { tag: 'answer', content } });
  });

  test('a <think> block after İ is cut out exactly', () => {
    expect(splitThink('İİ<think>a</think>b')).toEqual({ outside: 'İİb' });
    expect(splitThink('<think>İ</think>\\boxed{3}')).toEqual({ outside: '\\boxed{3}' });
    expect(parseTaggedOutput('<think>İstanbul?</think>\\boxed{3}', boxed)).toEqual({ valid: true, action: { tag: 'boxed', content: '3' } });
    expect(parseTaggedOutput('<think>İ</think><verify> APPROVE </verify>', verify)).toEqual({
      valid: true,
      action: { tag: 'verify', content: 'approve' },
    });
  });

  test('a character that is not an ASCII letter never spells a tag (Kelvin sign, long s, dotless ı, İ)', () => {
    // K (U+212A) lower-cases to k, so the copy read "<think>"; it is not the letter k.
    expect(parseTaggedOutput('<thin\u212a> <answer>x</answer>', answer)).toEqual({ valid: true, action: { tag: 'answer', content: 'x' } });
    expect(parseTaggedOutput('<an\u017fwer>x</an\u017fwer>', answer)).toEqual({ valid: false, reason: 'missing <answer>' });
    expect(parseTaggedOutput('<thınk>x</thınk><answer>y</answer>', answer).action).toEqual({ tag: 'answer', content: 'y' });
    expect(parseTaggedOutput('<thİnk> <answer>y</answer>', answer).action).toEqual({ tag: 'answer', content: 'y' });
    expect(parseTaggedOutput('<ans\ud83dwer>x</answer>', answer)).toEqual({ valid: false, reason: 'unbalanced <answer> tags' });
  });

  test('a tag name with regex characters is matched literally', () => {
    expect(parseTaggedOutput('<a.b>x</a.b> <aXb>y</aXb>', { tag: 'a.b' })).toEqual({ valid: true, action: { tag: 'a.b', content: 'x' } });
  });
});
