import { exactMatch, tokenF1 } from '@drmas/core';

export interface SearchAnswerScore {
  exactMatch: 0 | 1;
  /** Best token F1 over the golden answers. */
  f1: number;
}

/** Scores a prediction against golden answers; a missing prediction (`undefined`) scores 0. */
export function scoreSearchAnswer(prediction: string | undefined, goldens: readonly string[]): SearchAnswerScore {
  if (prediction === undefined || goldens.length === 0) return { exactMatch: 0, f1: 0 };
  // A loop, not Math.max(...): spreading a list of some 100,000 golden answers overflows the call stack.
  let f1 = 0;
  for (const golden of goldens) f1 = Math.max(f1, tokenF1(prediction, golden));
  return { exactMatch: exactMatch(prediction, goldens), f1 };
}

const OPEN = '<answer>';
const CLOSE = '</answer>';

/**
 * The text inside the last `<answer>...</answer>` of an agent's output, trimmed; `undefined` when there is none.
 * An `<answer>` pairs with the first `</answer>` after it, and the next pair starts after that close. Time linear in
 * the length of `text`: once an `<answer>` has no close after it, no later one has (a lazy regex tried every later
 * `<answer>` up to the end, quadratic time on an output of many opens).
 */
export function extractLastAnswer(text: string): string | undefined {
  let last: string | undefined;
  for (let open = text.indexOf(OPEN); open >= 0;) {
    const close = text.indexOf(CLOSE, open + OPEN.length);
    if (close < 0) break;
    last = text.slice(open + OPEN.length, close);
    open = text.indexOf(OPEN, close + CLOSE.length);
  }
  return last?.trim();
}

/** The answer an output gives: the text of its last `<answer>`, or all of it, trimmed, when it has none. */
export function answerInText(text: string): string {
  return extractLastAnswer(text) ?? text.trim();
}
