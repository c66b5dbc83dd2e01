import { describe, expect, test } from '@jest/globals';
import { exceedsJsonNesting } from '../src/http/jsonNesting.js';
import { echoJson, echoText } from '@drmas/core';
import {
  parseRetrieveRequest,
  RetrieveRequestInvalid,
  RetrieveResponseTooLarge,
  serializeRetrieveResponse,
  type SearchHit,
} from '../src/index.js';

const hits: SearchHit[][] = [
  [{ document: { id: 'd1', contents: '"Café"\nné' }, score: 1.5 }],
  [
    { document: { id: 'd2', contents: 'b' }, score: 0.25 },
    { document: { id: 'd1', contents: '"Café"\nné' }, score: 2 },
  ],
];
// written out by hand: the wire format of Search-R1's retrieval server
const WITH_SCORES =
  '{"result":[[{"document":{"id":"d1","contents":"\\"Café\\"\\nné"},"score":1.5}],' +
  '[{"document":{"id":"d2","contents":"b"},"score":0.25},{"document":{"id":"d1","contents":"\\"Café\\"\\nné"},"score":2}]]}';
const WITHOUT_SCORES =
  '{"result":[[{"id":"d1","contents":"\\"Café\\"\\nné"}],[{"id":"d2","contents":"b"},{"id":"d1","contents":"\\"Café\\"\\nné"}]]}';

describe('serializeRetrieveResponse', () => {
  test('writes the Search-R1 wire format, with and without scores', () => {
    expect(serializeRetrieveResponse(hits, true)).toBe(WITH_SCORES);
    expect(serializeRetrieveResponse(hits, false)).toBe(WITHOUT_SCORES);
    expect(serializeRetrieveResponse([], true)).toBe('{"result":[]}');
  });

  test('counts UTF-8 bytes: a limit of exactly the size passes, one byte less is refused naming the limit', () => {
    // "é" is 2 bytes in UTF-8 and appears 4 times, so the byte size is the character count plus 4
    const bytes = WITH_SCORES.length + 4;
    expect(serializeRetrieveResponse(hits, true, bytes)).toBe(WITH_SCORES);
    const error = (() => {
      try {
        serializeRetrieveResponse(hits, true, bytes - 1);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(RetrieveResponseTooLarge);
    expect((error as RetrieveResponseTooLarge).code).toBe('LIMIT_EXCEEDED');
    expect((error as RetrieveResponseTooLarge).queriesThatFit).toBe(1);
    expect((error as Error).message).toBe(
      `the response would exceed this server's limit of ${bytes - 1} bytes (maxResponseBytes): the hits of 1 of 2 queries fit; ask for a smaller topk or send fewer queries per request`,
    );
    // the first query's list alone, with its 2 two-byte characters
    const firstOnly = '{"result":[[{"document":{"id":"d1","contents":"\\"Café\\"\\nné"},"score":1.5}]]}';
    const firstBytes = firstOnly.length + 2;
    expect(() => serializeRetrieveResponse(hits, true, firstBytes - 1)).toThrow(/the hits of 0 of 2 queries fit/);
    expect(() => serializeRetrieveResponse(hits, true, firstBytes)).toThrow(/the hits of 1 of 2 queries fit/);
  });
});

describe('exceedsJsonNesting', () => {
  test.each([
    ['[]', 1, false],
    ['[[]]', 1, true],
    ['[[]]', 2, false],
    ['{"a":{"b":[1]}}', 3, false],
    ['{"a":{"b":[1]}}', 2, true],
    ['[1],[2],[3]', 1, false],
    // brackets inside strings, escaped quotes included, are not nesting
    ['["[[[[{{{{"]', 1, false],
    ['["\\"[[[[", "\\\\"]', 1, false],
    ['["\\\\"][[', 2, false],
    ['["\\\\"][[[', 2, true],
    ['"no brackets"', 0, false],
  ])('%s at depth limit %d: %s', (text, limit, expected) => {
    expect(exceedsJsonNesting(text, limit)).toBe(expected);
  });
});

describe('truncated echoes', () => {
  test('short text is quoted whole; longer text as its first 80 characters and its length', () => {
    expect(echoText('abc')).toBe('abc');
    expect(echoText('x'.repeat(80))).toBe('x'.repeat(80));
    expect(echoText('x'.repeat(81))).toBe(`${'x'.repeat(80)}... (81 chars)`);
    expect(echoText('abcdef', 3)).toBe('abc... (6 chars)');
  });

  test('a cut never splits a surrogate pair', () => {
    // the emoji takes characters 80 and 81 (1-based), so a cut at 80 would keep half of it
    const text = `${'a'.repeat(79)}😀${'b'.repeat(20)}`;
    expect(echoText(text)).toBe(`${'a'.repeat(79)}... (101 chars)`);
  });

  test('values are quoted as JSON; one too deep for JSON.stringify is named, not thrown', () => {
    expect(echoJson({ a: [1, 'x'] })).toBe('{"a":[1,"x"]}');
    expect(echoJson(undefined)).toBe('undefined');
    let deep: unknown = [];
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(echoJson(deep)).toBe('(a list that cannot be shown as JSON)');
  });
});

describe('parseRetrieveRequest limits', () => {
  const limits = { defaultTopk: 3, maxTopk: 10, maxQueries: 2 };

  test('too many queries are refused by their count, before any query is looked at', () => {
    const error = (() => {
      try {
        parseRetrieveRequest({ queries: [1, 2, 3] }, limits);
      } catch (e) {
        return e;
      }
    })() as RetrieveRequestInvalid;
    expect(error).toBeInstanceOf(RetrieveRequestInvalid);
    expect(error.field).toBe('queries');
    expect(error.message).toBe("queries: 3 queries exceed this server's limit of 2 (maxQueries); split the request");
    expect(parseRetrieveRequest({ queries: ['a', 'b'] }, limits)).toEqual({ queries: ['a', 'b'], topk: 3, returnScores: false });
  });

  test('bad values are echoed cut to 80 characters', () => {
    expect(() => parseRetrieveRequest({ queries: ['a'], topk: 'k'.repeat(1000) }, limits)).toThrow(
      `topk: must be an integer from 1 to 10 (maxTopk), got "${'k'.repeat(79)}... (1002 chars)`,
    );
    expect(() => parseRetrieveRequest({ query: { q: 'z'.repeat(500) } }, limits)).toThrow(
      /^query: must be a string or a list of strings, got \{"q":"z+\.\.\. \(508 chars\)$/,
    );
  });
});
