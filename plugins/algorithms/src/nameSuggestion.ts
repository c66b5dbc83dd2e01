import { AlgorithmInputError } from './errors.js';

/** Levenshtein distance (insert, delete, substitute; all cost 1). */
export function editDistance(a: string, b: string): number {
  let prev = new Array<number>(b.length + 1);
  let cur = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const sub = prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      cur[j] = Math.min(sub, prev[j]! + 1, cur[j - 1]! + 1);
    }
    [prev, cur] = [cur, prev];
  }
  return prev[b.length]!;
}

/** The closest known name, if it is close enough to be a plausible typo (distance at most max(2, a third of its length)). */
export function closestName(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  const lower = name.toLowerCase();
  for (const candidate of known) {
    const d = editDistance(lower, candidate.toLowerCase());
    if (d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  if (best === undefined) return undefined;
  return bestDistance <= Math.max(2, Math.floor(best.length / 3)) ? best : undefined;
}

/** Throws an AlgorithmInputError for an unknown name, listing the known names and a "Did you mean" hint. */
export function unknownNameError(key: string, what: string, name: unknown, known: readonly string[]): AlgorithmInputError {
  const shown = typeof name === 'string' ? `'${name}'` : String(name);
  const suggestion = typeof name === 'string' ? closestName(name, known) : undefined;
  const hint = suggestion !== undefined ? ` Did you mean '${suggestion}'?` : '';
  return new AlgorithmInputError(key, `unknown ${what} ${shown}; known: ${known.join(', ')}.${hint}`);
}
