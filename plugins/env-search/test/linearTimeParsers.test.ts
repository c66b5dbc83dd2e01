import { describe, expect, test } from '@jest/globals';
import { normalizeAnswer, SeededRng } from '@drmas/core';
import {
  DataFileError,
  extractLastAnswer,
  parseCorpusRecord,
  parseQaRecord,
  parseSearchAction,
  scoreSearchAnswer,
  type SearchAction,
} from '../src/index.js';

// The previous implementations, kept as oracles: lazy regexes that searched the rest of the text again from every
// opening tag (quadratic on many unclosed tags), and a split into an array of every word.
function naiveExtractLastAnswer(text: string): string | undefined {
  let last: string | undefined;
  for (const match of text.matchAll(/<answer>([\s\S]*?)<\/answer>/g)) last = match[1];
  return last?.trim();
}

function naiveParseSearchAction(text: string): SearchAction {
  const match = /<(search|answer)>([\s\S]*?)<\/\1>/.exec(text);
  if (!match) return { type: 'invalid' };
  const content = match[2]!.trim();
  return match[1] === 'search' ? { type: 'search', query: content } : { type: 'answer', answer: content };
}

function naiveNormalizeAnswer(text: string): string {
  return text
    .toLowerCase()
    .replace(/[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g, '')
    .replace(/\b(a|an|the)\b/g, ' ')
    .split(/\s+/)
    .filter((t) => t.length > 0)
    .join(' ');
}

/** `count` strings of up to `maxParts` pieces drawn from `parts`, from a fixed seed. */
function randomTexts(seed: number, parts: readonly string[], count: number, maxParts: number): string[] {
  const rng = new SeededRng(seed);
  return Array.from({ length: count }, () => Array.from({ length: rng.int(maxParts + 1) }, () => parts[rng.int(parts.length)]).join(''));
}

const TAG_PARTS = ['<answer>', '</answer>', '<search>', '</search>', 'x', ' Osmara ', '<', '>', '/', 'answer', 'İ', '\ud83d', '\n'];

describe('tag readers take one pass', () => {
  const texts = randomTexts(11, TAG_PARTS, 4000, 12);

  test('extractLastAnswer: the same answers as the lazy-regex reference on 4,000 random texts', () => {
    expect(texts.filter((t) => extractLastAnswer(t) !== naiveExtractLastAnswer(t))).toEqual([]);
    expect(texts.filter((t) => naiveExtractLastAnswer(t) !== undefined).length).toBeGreaterThan(300);
  });

  test('parseSearchAction: the same actions as the lazy-regex reference on 4,000 random texts', () => {
    expect(texts.filter((t) => JSON.stringify(parseSearchAction(t)) !== JSON.stringify(naiveParseSearchAction(t)))).toEqual([]);
    expect(texts.filter((t) => naiveParseSearchAction(t).type === 'search').length).toBeGreaterThan(300);
  });

  test('hand-worked: an answer pairs with the first close after it', () => {
    expect(extractLastAnswer(`${'<answer>'.repeat(5000)}x</answer> <answer>y`)).toBe(`${'<answer>'.repeat(4999)}x`);
    expect(parseSearchAction(`${'<search>'.repeat(5000)}<answer> Paris </answer>`)).toEqual({ type: 'answer', answer: 'Paris' });
    expect(parseSearchAction('<answer>a<search>q</search></answer>')).toEqual({ type: 'answer', answer: 'a<search>q</search>' });
  });
});

describe('normalizeAnswer collapses whitespace without a word array', () => {
  test('the same result as splitting and joining, on 4,000 random texts with every kind of whitespace', () => {
    const parts = [' ', '  ', '\t', '\n', '\u00a0', '\u2028', '\ufeff', '\u3000', 'a', 'an', 'The', 'x', '.', ',', 'İ', 'é', 'Osmara'];
    const texts = randomTexts(3, parts, 4000, 12);
    expect(texts.filter((t) => normalizeAnswer(t) !== naiveNormalizeAnswer(t))).toEqual([]);
  });
});

describe('huge lists and values', () => {
  test('scoreSearchAnswer with 160,000 golden answers (Math.max(...list) overflowed the call stack)', () => {
    const goldens = Array.from({ length: 160_000 }, (_, i) => `city ${i}`);
    expect(scoreSearchAnswer('City 159999', goldens)).toEqual({ exactMatch: 1, f1: 1 });
    // "city" is one of the two tokens of every golden: p = 1, r = 1/2, F1 = 2/3.
    const score = scoreSearchAnswer('the city', goldens);
    expect(score.exactMatch).toBe(0);
    expect(score.f1).toBeCloseTo(2 / 3, 12);
  });

  test('a megabyte field is named in a short message', () => {
    const huge = { nested: 'x'.repeat(1 << 20) };
    for (const call of [
      () => parseQaRecord({ question: huge, answer: 'a' }, 'qa.jsonl', 3),
      () => parseCorpusRecord({ id: 1, contents: huge }, 'c.jsonl', 4),
    ]) {
      let thrown: unknown;
      try {
        call();
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(DataFileError);
      expect((thrown as DataFileError).message.length).toBeLessThan(300);
      expect((thrown as DataFileError).message).toContain('{"nested":"xxx');
    }
  });
});
