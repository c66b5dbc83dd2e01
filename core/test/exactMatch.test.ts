import { describe, expect, it } from '@jest/globals';
import { exactMatch, normalizeAnswer, tokenF1 } from '@drmas/core';

describe('normalizeAnswer (SQuAD)', () => {
  it.each([
    ['The Osmara', 'osmara'],
    ['  an  Apple,  a day! ', 'apple day'],
    ['Theatre of the Absurd', 'theatre of absurd'],
    ["O'Neil-Smith", 'oneilsmith'],
    ['1,873', '1873'],
    ['A', ''],
  ])('%j -> %j', (input, expected) => {
    expect(normalizeAnswer(input)).toBe(expected);
  });
});

describe('exactMatch and tokenF1', () => {
  it.each<[string, string[], 0 | 1]>([
    ['Osmara', ['Osmara'], 1],
    ['the osmara.', ['Osmara'], 1],
    ['Osmara city', ['Osmara'], 0],
    ['Kelvo', ['Osmara', 'Kelvo River'], 0],
    ['Ulmet River', ['Ulmet River', 'Ulmet'], 1],
    ['', ['Osmara'], 0],
  ])('%j vs %j: EM %d', (prediction, goldens, em) => {
    expect(exactMatch(prediction, goldens)).toBe(em);
  });

  it.each<[string, string, number]>([
    ['Osmara city', 'Osmara', 2 / 3], // p = 1/2, r = 1  => 2·(1/2)·1 / (3/2)
    ['Varnok', 'Varnok Telli', 2 / 3], // p = 1, r = 1/2
    ['Telli Varnok', 'Varnok Telli', 1], // same bag of tokens
    ['a b c d', 'b x', 0.4], // the article "a" goes: b c d vs b x, p = 1/3, r = 1/2  => (2·1/6)/(5/6)
    ['red red red', 'red blue', (2 * (1 / 3) * (1 / 2)) / (1 / 3 + 1 / 2)], // duplicates count once per golden occurrence
    ['', '', 1],
    ['', 'Osmara', 0],
  ])('F1 of %j against %j is %d', (prediction, golden, f1) => {
    expect(tokenF1(prediction, golden)).toBeCloseTo(f1, 12);
  });
});
