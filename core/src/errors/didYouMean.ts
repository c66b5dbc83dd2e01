/** Levenshtein distance with an early exit once every entry of a row exceeds `limit`. */
export function editDistance(a: string, b: string, limit = Infinity): number {
  if (a === b) return 0;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const distance = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      current[j] = distance;
      rowMin = Math.min(rowMin, distance);
    }
    if (rowMin > limit) return rowMin;
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * Whether `short` reads as an abbreviation of `long`: the same first letter, then its letters in order within `long`
 * (`outdir` in `outputdir`, `lrscale` in `learningratescale`), and at least half as long.
 */
function abbreviates(short: string, long: string): boolean {
  if (short[0] !== long[0] || 2 * short.length < long.length) return false;
  let at = 0;
  for (const letter of long) if (letter === short[at]) at++;
  return at === short.length;
}

/**
 * The candidates closest to `input` (case-insensitive), best first: those within a third of the input's length
 * (at least 2 edits), plus any candidate that contains the input or is contained in it; failing all of those, the
 * candidates the input abbreviates.
 */
export function closestMatches(input: string, candidates: Iterable<string>, max = 3): string[] {
  const needle = input.toLowerCase();
  const limit = Math.max(2, Math.floor(needle.length / 3));
  const scored: Array<[string, number]> = [];
  const abbreviated: string[] = [];
  for (const candidate of new Set(candidates)) {
    const hay = candidate.toLowerCase();
    const distance = editDistance(needle, hay, limit);
    if (distance <= limit) scored.push([candidate, distance]);
    else if (needle.length >= 3 && (hay.includes(needle) || needle.includes(hay))) scored.push([candidate, limit + 1]);
    else if (needle.length >= 3 && abbreviates(needle, hay)) abbreviated.push(candidate);
  }
  if (scored.length === 0) for (const candidate of abbreviated) scored.push([candidate, limit + 2]);
  scored.sort((x, y) => x[1] - y[1] || x[0].localeCompare(y[0]));
  return scored.slice(0, max).map(([candidate]) => candidate);
}

/**
 * ` Did you mean "x"?` (with a leading space), or an empty string when nothing is close; `shown` gives the text named
 * for a candidate matched (default the candidate itself).
 */
export function didYouMean(input: string, candidates: Iterable<string>, shown: (match: string) => string = (match) => match): string {
  const matches = closestMatches(input, candidates);
  if (matches.length === 0) return '';
  return ` Did you mean ${matches.map((m) => JSON.stringify(shown(m))).join(' or ')}?`;
}
