/**
 * SQuAD `normalize_answer`: lower-case, drop punctuation, drop the articles a/an/the, collapse whitespace. Each run
 * of whitespace other than a single space becomes one space and the ends are trimmed (as splitting on whitespace and
 * joining with spaces does, without an array of every word).
 */
export function normalizeAnswer(text: string): string {
  return text
    .toLowerCase()
    .replace(/[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g, '')
    .replace(/\b(a|an|the)\b/g, ' ')
    .replace(/\s{2,}|[^\S ]/g, ' ')
    .trim();
}

/** 1 when the normalised prediction equals any normalised golden answer. */
export function exactMatch(prediction: string, goldens: readonly string[]): 0 | 1 {
  const p = normalizeAnswer(prediction);
  return goldens.some((g) => normalizeAnswer(g) === p) ? 1 : 0;
}

/** SQuAD token-level F1 of the prediction against one golden answer. */
export function tokenF1(prediction: string, golden: string): number {
  const p = normalizeAnswer(prediction).split(' ').filter(Boolean);
  const g = normalizeAnswer(golden).split(' ').filter(Boolean);
  if (p.length === 0 || g.length === 0) return p.length === g.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const t of g) counts.set(t, (counts.get(t) ?? 0) + 1);
  let common = 0;
  for (const t of p) {
    const c = counts.get(t) ?? 0;
    if (c > 0) {
      common++;
      counts.set(t, c - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / p.length;
  const recall = common / g.length;
  return (2 * precision * recall) / (precision + recall);
}

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
