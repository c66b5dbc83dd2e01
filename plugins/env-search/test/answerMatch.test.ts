import { exactMatch } from '@drmas/core';
import { extractLastAnswer, scoreSearchAnswer } from '../src/index.js';

describe('scoreSearchAnswer: exact match and the best F1 over the golden answers', () => {
  it.each<[string, string[], 0 | 1, number]>([
    ['Osmara', ['Osmara'], 1, 1],
    ['the osmara.', ['Osmara'], 1, 1],
    ['Osmara city', ['Osmara'], 0, 2 / 3], // p = 1/2, r = 1  => 2·(1/2)·1 / (3/2)
    ['Varnok', ['Varnok Telli'], 0, 2 / 3], // p = 1, r = 1/2
    ['Telli Varnok', ['Varnok Telli'], 0, 1], // same bag of tokens
    ['Kelvo', ['Osmara', 'Kelvo River'], 0, 2 / 3], // best golden counts
    ['Ulmet River', ['Ulmet River', 'Ulmet'], 1, 1],
    ['', ['Osmara'], 0, 0],
    ['a b c d', ['b x'], 0, 0.4], // the article "a" goes: b c d vs b x, p = 1/3, r = 1/2  => (2·1/6)/(5/6)
  ])('%j vs %j: EM %d, F1 %d', (prediction, goldens, em, f1) => {
    const score = scoreSearchAnswer(prediction, goldens);
    expect(score.exactMatch).toBe(em);
    expect(score.f1).toBeCloseTo(f1, 12);
    expect(exactMatch(prediction, goldens)).toBe(em);
  });

  it('scores a missing answer 0', () => {
    expect(scoreSearchAnswer(undefined, ['x'])).toEqual({ exactMatch: 0, f1: 0 });
  });

  it('extracts the last <answer> of an output', () => {
    expect(extractLastAnswer('<answer>a</answer> then <answer> Osmara </answer>')).toBe('Osmara');
    expect(extractLastAnswer('no tags')).toBeUndefined();
  });
});
