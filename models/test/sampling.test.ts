import { describe, expect, test } from '@jest/globals';
import { distinctSequences, logProbAtTemperature, sampleToken, sampleWithLogProb, SeededRandom } from '../src/index.js';
import { mostLikelyFirst } from '../src/decoding/sampling.js';

/** The order a stable comparator sort by descending log-prob gives (the top-p filter's order before). */
function comparatorOrder(logProbs: Float32Array, ids: number[]): number[] {
  return [...ids].sort((a, b) => logProbs[b]! - logProbs[a]!);
}

/** Top-p sampling written as transformers' TopPLogitsWarper reads (sort, cumulate, keep), with the comparator sort. */
function referenceTopP(logProbs: Float32Array, temperature: number, topP: number, rng: SeededRandom): number {
  return referenceTopK(logProbs, temperature, 0, topP, rng);
}

/** Top-k (ties with the k-th kept), then top-p, as transformers' TopKLogitsWarper and TopPLogitsWarper read. */
function referenceTopK(logProbs: Float32Array, temperature: number, topK: number, topP: number, rng: SeededRandom): number {
  const kth = topK > 0 ? [...logProbs].sort((x, y) => y - x)[topK - 1]! : -Infinity;
  const candidates = Array.from(logProbs, (_, i) => i).filter((i) => logProbs[i]! >= kth);
  const sorted = comparatorOrder(logProbs, candidates);
  const best = logProbs[sorted[0]!]!;
  const weight = (i: number): number => Math.exp((logProbs[i]! - best) / temperature);
  const weights = sorted.map(weight);
  // The softmax's total, over the candidates in id order.
  const total = candidates.map(weight).reduce((a, b) => a + b, 0);
  let cumulative = 0;
  let keep = 0;
  while (keep < sorted.length) {
    cumulative += weights[keep]! / total;
    keep++;
    if (cumulative >= topP) break;
  }
  const kept = sorted.slice(0, keep);
  const max = Math.max(...kept.map((i) => logProbs[i]!));
  const w = kept.map((i) => Math.exp((logProbs[i]! - max) / temperature));
  let u = rng.uniform() * w.reduce((a, b) => a + b, 0);
  for (let j = 0; j < kept.length; j++) if ((u -= w[j]!) < 0) return kept[j]!;
  return kept[kept.length - 1]!;
}

function randomRow(rng: SeededRandom, v: number, spread = 6): Float32Array {
  const logits = Array.from({ length: v }, () => spread * rng.uniform() ** 2);
  const logZ = Math.log(logits.reduce((a, x) => a + Math.exp(x), 0));
  return Float32Array.from(logits, (x) => x - logZ);
}

describe('mostLikelyFirst', () => {
  test('orders as a stable sort by descending log-prob: ties in id order, -Infinity last, -0 equal to 0', () => {
    const logProbs = Float32Array.from([-2, 0, -Infinity, -0.5, -2, -0, -Infinity, -1e-30, -0.5, -3.4e38]);
    const all = Array.from(logProbs, (_, i) => i);
    expect(Array.from(mostLikelyFirst(logProbs))).toEqual([1, 5, 7, 3, 8, 0, 4, 9, 2, 6]);
    expect(Array.from(mostLikelyFirst(logProbs))).toEqual(comparatorOrder(logProbs, all));
    // Candidates (a top-k filter's ids, ascending) are ordered among themselves.
    const candidates = Int32Array.from([0, 2, 4, 5, 8]);
    expect(Array.from(mostLikelyFirst(logProbs, candidates))).toEqual([5, 8, 0, 4, 2]);
  });

  test('agrees with the comparator sort on rows of a real vocabulary size, with many ties', () => {
    const rng = new SeededRandom(3);
    for (let trial = 0; trial < 20; trial++) {
      const v = trial % 2 ? 512 : 151_936;
      // Rounded to a few values, so ties are common.
      const row = Float32Array.from(randomRow(rng, v), (x) => (trial % 4 < 2 ? Math.round(x * 4) / 4 : x));
      const ids = Array.from(row, (_, i) => i);
      expect(Array.from(mostLikelyFirst(row))).toEqual(comparatorOrder(row, ids));
    }
  });
});

describe('sampleToken with top-p', () => {
  test('samples the token the sort-and-cumulate reference samples, from the same stream', () => {
    const rows = new SeededRandom(7);
    const [a, b] = [new SeededRandom(11), new SeededRandom(11)];
    // Spreads of 6 to 120 nats: the wide rows have tokens too unlikely to change the total, which the filter does not
    // sort; top-p just under 1 keeps them all (the filter then sorts the whole row).
    for (let trial = 0; trial < 400; trial++) {
      let row = randomRow(rows, 512, [6, 30, 60, 120][trial % 4]);
      // Log-probs rounded to quarters: ties, ordered by id within the nucleus and at its edge.
      if (trial % 5 === 4) row = Float32Array.from(row, (x) => Math.round(x * 4) / 4);
      const temperature = [0.6, 1, 1.3][trial % 3]!;
      const topP = [0.95, 0.5, 0.999, 1 - 2 ** -53][trial % 4 === 3 ? 3 : trial % 3]!;
      expect(sampleToken(row, { temperature, topK: 0, topP }, a)).toBe(referenceTopP(row, temperature, topP, b));
      const topK = { temperature, topK: 40, topP };
      expect(sampleToken(row, topK, a)).toBe(referenceTopK(row, temperature, 40, topP, b));
    }
  });
});

describe('sampleWithLogProb', () => {
  test('picks the token sampleToken picks and gives logProbAtTemperature of it, bit for bit, from the same stream', () => {
    const rows = new SeededRandom(5);
    const [a, b] = [new SeededRandom(13), new SeededRandom(13)];
    let fastPath = 0;
    for (let trial = 0; trial < 600; trial++) {
      const v = trial % 50 === 0 ? 151_936 : 512;
      const row = randomRow(rows, v, [6, 30, 60, 120][trial % 4]);
      // Masked tokens; a row of ties; a row with NaN and one with no finite value take the two functions as they are.
      if (trial % 5 === 1) row.fill(-Infinity, 0, 100);
      if (trial % 17 === 2) row.fill(Math.log(1 / v));
      if (trial === 40) row[7] = NaN;
      if (trial === 41) row.fill(-Infinity);
      const temperature = [0.6, 1, 1.7, 0][trial % 4]!;
      const settings = { temperature, topK: [0, 0, 7, 1][trial % 4]!, topP: [1, 0.95, 0.3, 1 - 2 ** -53][(trial >> 2) % 4]! };
      const got = sampleWithLogProb(row, settings, a);
      const token = sampleToken(row, settings, b);
      expect(got.token).toBe(token);
      expect(Object.is(got.logProb, logProbAtTemperature(row, token, temperature))).toBe(true);
      if (temperature !== 1 && temperature > 0) fastPath++;
    }
    expect(fastPath).toBeGreaterThan(250);
  });
});

describe('distinctSequences', () => {
  test('groups equal sequences in first-seen order and maps each row to its group', () => {
    const rows = [[1, 2, 3], [4], [1, 2, 3], [1, 2], [4], [12, 3], [1, 23]];
    const { distinct, of } = distinctSequences(rows);
    expect(distinct).toEqual([[1, 2, 3], [4], [1, 2], [12, 3], [1, 23]]);
    expect(Array.from(of)).toEqual([0, 1, 0, 2, 1, 3, 4]);
    expect(distinctSequences([Int32Array.of(5, 6), Int32Array.of(5, 6)]).distinct).toHaveLength(1);
  });
});
