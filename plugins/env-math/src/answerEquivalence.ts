import { extractBoxedAnswer, type AnswerFormat } from '@drmas/core';
import { normalizeMathAnswer } from './normalizeAnswer.js';
import { exactNumbersEqual, parseExactNumber } from './numericAnswer.js';
import { symbolicallyEqual } from './symbolicEquivalence.js';

/**
 * Answers longer than this many characters are equal only when they are the same string: normalizing and comparing
 * them item by item would take time for no answer a problem has.
 */
export const MAX_ANSWER_LENGTH = 10_000;

/**
 * Tuples nested deeper than this are not compared item by item (not equal unless the same string): each level
 * normalizes its items again, so the work grows with the depth times the length.
 */
export const MAX_TUPLE_DEPTH = 8;

interface Tuple {
  open: string;
  close: string;
  items: string[];
}

/** `(1,2)`, `[0,\frac{1}{2})`, `1,2,3`: the top-level comma-separated items and the brackets around them. */
function splitTuple(s: string): Tuple | undefined {
  let open = '';
  let close = '';
  let body = s;
  if (/^[([]/.test(s) && /[)\]]$/.test(s)) {
    let depth = 0;
    let closesAtEnd = true;
    for (let i = 0; i < s.length; i++) {
      const ch = s[i]!;
      if ('([{'.includes(ch)) depth++;
      else if (')]}'.includes(ch)) depth--;
      if (depth === 0 && i < s.length - 1) closesAtEnd = false;
    }
    if (closesAtEnd) {
      open = s[0]!;
      close = s[s.length - 1]!;
      body = s.slice(1, -1);
    }
  }
  const items: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if ('([{'.includes(ch)) depth++;
    else if (')]}'.includes(ch)) depth--;
    else if (ch === ',' && depth === 0) {
      items.push(body.slice(start, i));
      start = i + 1;
    }
  }
  items.push(body.slice(start));
  return items.length > 1 ? { open, close, items } : undefined;
}

function normalizedEqual(a: string, b: string, depth = 0): boolean {
  if (a.length === 0 || b.length === 0) return false;
  if (a === b) return true;
  const x = parseExactNumber(a);
  const y = parseExactNumber(b);
  if (x && y) return exactNumbersEqual(x, y);
  const ta = splitTuple(a);
  const tb = splitTuple(b);
  if (ta || tb) {
    if (!ta || !tb || ta.open !== tb.open || ta.close !== tb.close || ta.items.length !== tb.items.length) return false;
    if (depth >= MAX_TUPLE_DEPTH) return false;
    return ta.items.every((item, k) => normalizedEqual(normalizeMathAnswer(item), normalizeMathAnswer(tb.items[k]!), depth + 1));
  }
  return symbolicallyEqual(a, b);
}

/**
 * Whether a predicted answer means the same as the reference, in order: equal after `normalizeMathAnswer`; equal
 * as exact rationals when both are plain numbers (`0.5` = `1/2` = `\frac{1}{2}`, `10.0` = `10`, `1,000` = `1000`;
 * `0.33` != `\frac{1}{3}`); tuples and intervals item by item in order with the same brackets; otherwise
 * symbolically with mathjs (see `symbolicallyEqual`). Percent signs are dropped by normalization, so `50\%` = `50`
 * but `50\%` != `0.5`. Never throws: anything unparseable is "not equal". Bounded work: answers longer than
 * `MAX_ANSWER_LENGTH` are equal only when they are the same string, tuples are compared item by item down to
 * `MAX_TUPLE_DEPTH` levels, numbers exactly up to `MAX_EXACT_DIGITS` digits.
 */
export function mathAnswersEqual(predicted: string, truth: string): boolean {
  try {
    if (predicted === undefined || predicted === null || truth === undefined || truth === null) return false;
    const [p, t] = [String(predicted), String(truth)];
    if (p.length > MAX_ANSWER_LENGTH || t.length > MAX_ANSWER_LENGTH) return p === t;
    return normalizedEqual(normalizeMathAnswer(p), normalizeMathAnswer(t));
  } catch {
    return false;
  }
}

/**
 * The AnswerFormat `math` env-math contributes: the last `\boxed{}` of the final answer section (`extractBoxedAnswer`),
 * compared by `mathAnswersEqual`. What env-debate judges debaters' answers with and the orchestra's majority vote
 * groups answers by.
 */
export const mathAnswerFormat: AnswerFormat = Object.freeze({ extract: extractBoxedAnswer, equal: mathAnswersEqual });
