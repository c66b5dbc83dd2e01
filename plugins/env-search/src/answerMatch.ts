/** SQuAD `normalize_answer`: lower-case, drop punctuation, drop the articles a/an/the, collapse whitespace. */
export function normalizeAnswer(text: string): string {
  return text
    .toLowerCase()
    .replace(/[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g, '')
    .replace(/\b(a|an|the)\b/g, ' ')
    .split(/\s+/)
    .filter((t) => t.length > 0)
    .join(' ');
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
  return { exactMatch: exactMatch(prediction, goldens), f1: Math.max(...goldens.map((g) => tokenF1(prediction, g))) };
}

const ANSWER_TAG = /<answer>([\s\S]*?)<\/answer>/g;

/** The text inside the last `<answer>...</answer>` of an agent's output, trimmed; `undefined` when there is none. */
export function extractLastAnswer(text: string): string | undefined {
  let last: string | undefined;
  for (const match of text.matchAll(ANSWER_TAG)) last = match[1];
  return last?.trim();
}
