/**
 * Similarity ratio 2M/T of Python's `difflib.SequenceMatcher(None, a, b).ratio()`, including its
 * autojunk heuristic (for len(b) >= 200, elements occurring more than len(b)/100 + 1 times in b are not
 * used to seed matches). Strings are compared by Unicode code points, as Python does.
 */
export function similarityRatio(aText: string, bText: string): number {
  const a = Array.from(aText);
  const b = Array.from(bText);
  const total = a.length + b.length;
  if (total === 0) return 1;
  const b2j = new Map<string, number[]>();
  for (const [j, elt] of b.entries()) {
    const list = b2j.get(elt);
    if (list === undefined) b2j.set(elt, [j]);
    else list.push(j);
  }
  if (b.length >= 200) {
    const ntest = Math.floor(b.length / 100) + 1;
    for (const [elt, idxs] of b2j) if (idxs.length > ntest) b2j.delete(elt);
  }
  let matches = 0;
  const queue: Array<[number, number, number, number]> = [[0, a.length, 0, b.length]];
  while (queue.length > 0) {
    const [alo, ahi, blo, bhi] = queue.pop() as [number, number, number, number];
    const [i, j, k] = longestMatch(a, b, b2j, alo, ahi, blo, bhi);
    if (k > 0) {
      matches += k;
      if (alo < i && blo < j) queue.push([alo, i, blo, j]);
      if (i + k < ahi && j + k < bhi) queue.push([i + k, ahi, j + k, bhi]);
    }
  }
  return (2 * matches) / total;
}

/** difflib `find_longest_match` without junk (isjunk is None, so only the popular-element purge applies). */
function longestMatch(
  a: string[],
  b: string[],
  b2j: Map<string, number[]>,
  alo: number,
  ahi: number,
  blo: number,
  bhi: number,
): [number, number, number] {
  let besti = alo;
  let bestj = blo;
  let bestsize = 0;
  let j2len = new Map<number, number>();
  for (let i = alo; i < ahi; i++) {
    const next = new Map<number, number>();
    const js = b2j.get(a[i]!);
    if (js !== undefined) {
      for (const j of js) {
        if (j < blo) continue;
        if (j >= bhi) break;
        const k = (j2len.get(j - 1) ?? 0) + 1;
        next.set(j, k);
        if (k > bestsize) {
          besti = i - k + 1;
          bestj = j - k + 1;
          bestsize = k;
        }
      }
    }
    j2len = next;
  }
  while (besti > alo && bestj > blo && a[besti - 1] === b[bestj - 1]) {
    besti--;
    bestj--;
    bestsize++;
  }
  while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] === b[bestj + bestsize]) bestsize++;
  return [besti, bestj, bestsize];
}
