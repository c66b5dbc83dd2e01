import { describe, expect, test } from '@jest/globals';
import { extractBoxedAnswer } from '@drmas/core';

describe('extractBoxedAnswer', () => {
  test.each<[string, string | undefined]>([
    ['The answer is \\boxed{15}.', '15'],
    ['so \\boxed{\\frac{1}{2}} it is', '\\frac{1}{2}'],
    ['\\boxed{\\frac{\\sqrt{3}}{2}}', '\\frac{\\sqrt{3}}{2}'],
    ['\\boxed{\\{1, 2\\}}', '\\{1, 2\\}'],
    ['\\boxed{ 42 }', '42'],
    ['\\fbox{7}', '7'],
    ['\\boxed 5$ done', '5'],
    ['\\boxed {9}', '9'],
    ['first \\boxed{1} then \\boxed{2}', '2'],
    ['\\fbox{1} then \\boxed{2} then \\fbox{3}', '3'],
    ['no box here', undefined],
    ['truncated \\boxed{\\frac{1}{2', undefined],
    ['\\boxed{3} and finally \\boxed{4', undefined],
    ['ends at \\boxed', undefined],
    ['<think>maybe \\boxed{3}</think> it is \\boxed{4}', '4'],
    ['<think>maybe \\boxed{3}</think> I am sure', undefined],
    ['<think>a</think> \\boxed{1} <think>b</think> \\boxed{2}', '2'],
    ['\\boxedx{3}', undefined],
  ])('%s', (text, expected) => {
    expect(extractBoxedAnswer(text)).toBe(expected);
  });
});
