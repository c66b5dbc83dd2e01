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
