import type { TopLogProb } from '@drmas/core';
import type { SeededRandom } from './SeededRandom.js';

// Module-level binding: a global lookup of `Math` per call is slow inside vm contexts (jest).
const { exp } = Math;

export interface SamplingSettings {
  /** 0 = greedy. */
  temperature: number;
  /** 0 = off. */
  topK: number;
  /** 1 = off. */
  topP: number;
}

/**
 * Log-prob of `token` under the policy at `temperature`, from a row of temperature-1 log-probs:
 * `l/T - logsumexp(l/T)` (veRL's `logits / temperature`; top-k and top-p do not change it). Greedy (0) and 1 return
 * the row's value. `token` is an index into `logProbs` (the token sampled from that row).
 */
export function logProbAtTemperature(logProbs: Float32Array, token: number, temperature: number): number {
  if (temperature <= 0 || temperature === 1) return logProbs[token]!;
  const invT = 1 / temperature;
  let max = -Infinity;
  for (let i = 0; i < logProbs.length; i++) {
    const l = logProbs[i]!;
    if (l > max) max = l;
  }
  let total = 0;
  for (let i = 0; i < logProbs.length; i++) total += exp((logProbs[i]! - max) * invT);
  return (logProbs[token]! - max) * invT - Math.log(total);
}

/**
 * The `k` most likely tokens of a row of temperature-1 log-probs, most likely first (ties: lower id first), each with
 * its log-prob at `temperature` as `logProbAtTemperature` gives it (OpenAI's `top_logprobs` beside the sampled token).
 */
export function topLogProbs(logProbs: Float32Array, k: number, temperature: number): TopLogProb[] {
  const top: number[] = [];
  const n = Math.min(k, logProbs.length);
  for (let i = 0; i < logProbs.length && n > 0; i++) {
    const l = logProbs[i]!;
    if (top.length === n && l <= logProbs[top[n - 1]!]!) continue;
    let at = top.length === n ? n - 1 : top.length;
    while (at > 0 && logProbs[top[at - 1]!]! < l) at--;
    top.splice(at, 0, i);
    if (top.length > n) top.pop();
  }
  if (temperature <= 0 || temperature === 1) return top.map((tokenId) => ({ tokenId, logProb: logProbs[tokenId]! }));
  const invT = 1 / temperature;
  let max = -Infinity;
  for (let i = 0; i < logProbs.length; i++) if (logProbs[i]! > max) max = logProbs[i]!;
  let total = 0;
  for (let i = 0; i < logProbs.length; i++) total += exp((logProbs[i]! - max) * invT);
  const logTotal = Math.log(total);
  return top.map((tokenId) => ({ tokenId, logProb: (logProbs[tokenId]! - max) * invT - logTotal }));
}

/**
 * Picks the next token from a row of temperature-1 log-probs, applying temperature, then top-k, then top-p, in
 * the order of transformers' logits processors (top-k keeps ties with the k-th value; top-p keeps the smallest
 * set of most likely tokens whose probability reaches `topP`, at least one).
 */
export function sampleToken(logProbs: Float32Array, settings: SamplingSettings, rng: SeededRandom): number {
  return pickToken(logProbs, settings, rng);
}

/** A sampled token and its log-prob at the sampling temperature. */
export interface SampledToken {
  token: number;
  logProb: number;
}

/**
 * `sampleToken` and `logProbAtTemperature` of the token it picks, bit for bit, with each token's weight
 * `exp((l - max) / T)` computed once for the row: the two computed it up to three times (the row's total, the top-p
 * filter's weights and the draw's). A row holding NaN or no finite maximum takes the two functions as they are.
 */
export function sampleWithLogProb(logProbs: Float32Array, settings: SamplingSettings, rng: SeededRandom): SampledToken {
  const temperature = settings.temperature;
  if (temperature <= 0 || temperature === 1) {
    const token = pickToken(logProbs, settings, rng);
    return { token, logProb: logProbs[token]! };
  }
  let max = -Infinity;
  let nan = false;
  for (let i = 0; i < logProbs.length; i++) {
    const l = logProbs[i]!;
    if (l > max) max = l;
    else if (l !== l) nan = true;
  }
  if (nan || !Number.isFinite(max)) {
    const token = pickToken(logProbs, settings, rng);
    return { token, logProb: logProbAtTemperature(logProbs, token, temperature) };
  }
  // The same operations in the same order as logProbAtTemperature's total, and each weight the one nucleus and
  // drawFrom compute: their maximum is this row's (the top-k and top-p candidates hold a most likely token).
  const invT = 1 / temperature;
  const weights = scratch.rowWeights.take(logProbs.length);
  let total = 0;
  for (let i = 0; i < logProbs.length; i++) total += weights[i] = exp((logProbs[i]! - max) * invT);
  const token = pickToken(logProbs, settings, rng, weights);
  return { token, logProb: (logProbs[token]! - max) * invT - Math.log(total) };
}

/** `sampleToken`, each candidate's weight read from `rowWeights` (by token id) when given. */
function pickToken(logProbs: Float32Array, settings: SamplingSettings, rng: SeededRandom, rowWeights?: Float64Array): number {
  const v = logProbs.length;
  if (settings.temperature <= 0) return argmax(logProbs);
  const invT = 1 / settings.temperature;

  let candidates: Int32Array | undefined;
  if (settings.topK > 0 && settings.topK < v) {
    const kth = kthLargest(logProbs, settings.topK);
    let n = 0;
    for (let i = 0; i < v; i++) if (logProbs[i]! >= kth) n++;
    candidates = new Int32Array(n);
    for (let i = 0, j = 0; i < v; i++) if (logProbs[i]! >= kth) candidates[j++] = i;
  }
  if (settings.topP < 1) candidates = nucleus(logProbs, candidates, invT, settings.topP, rowWeights);
  return drawFrom(logProbs, candidates, invT, rng, rowWeights);
}

/**
 * How many of the most likely tokens the top-p filter finds by insertion before it sorts the whole pool: at the
 * evaluations' temperature 0.6 and top-p 0.95 most nuclei hold a few tokens, and finding them costs one pass over
 * the row, where sorting every candidate took most of a sampled token's time.
 */
const PROBE = 8;

/**
 * The top-p filter: the most likely of `candidates` (all ids when absent) whose probability at temperature `1 / invT`
 * reaches `topP`, at least one, most likely first (ties in id order). The probabilities are the weights over their
 * total summed in id order, the order the token's log-prob sums them. A row holding NaN or no finite value keeps
 * every candidate, sorted.
 */
function nucleus(
  logProbs: Float32Array,
  candidates: Int32Array | undefined,
  invT: number,
  topP: number,
  rowWeights: Float64Array | undefined,
): Int32Array {
  const n = candidates ? candidates.length : logProbs.length;
  let best = -Infinity;
  let nan = false;
  for (let j = 0; j < n; j++) {
    const l = logProbs[candidates ? candidates[j]! : j]!;
    if (l > best) best = l;
    else if (l !== l) nan = true;
  }
  if (nan || !(best > -Infinity) || best === Infinity) return sortMostLikelyFirst(logProbs, candidates);
  const weight = (id: number): number => (rowWeights ? rowWeights[id]! : exp((logProbs[id]! - best) * invT));
  let total = 0;
  for (let j = 0; j < n; j++) total += weight(candidates ? candidates[j]! : j);

  // The PROBE most likely, by insertion in id order (a later equal value goes after an earlier one).
  const probe = scratch.probe.take(Math.min(PROBE, n));
  let found = 0;
  for (let j = 0; j < n; j++) {
    const id = candidates ? candidates[j]! : j;
    const l = logProbs[id]!;
    if (found === probe.length && !(l > logProbs[probe[found - 1]!]!)) continue;
    let at = found === probe.length ? found - 1 : found++;
    while (at > 0 && logProbs[probe[at - 1]!]! < l) {
      probe[at] = probe[at - 1]!;
      at--;
    }
    probe[at] = id;
  }
  const kept = keptOf(probe, weight, total, topP);
  if (kept < probe.length || probe.length === n) return probe.subarray(0, kept);
  const sorted = sortMostLikelyFirst(logProbs, candidates);
  return sorted.subarray(0, keptOf(sorted, weight, total, topP));
}

/** How many of `ordered` (most likely first) the top-p filter keeps: until their probability reaches `topP`, else all. */
function keptOf(ordered: Int32Array, weight: (id: number) => number, total: number, topP: number): number {
  let cumulative = 0;
  // HF removes tokens whose ascending cumulative probability is <= 1 - top_p: keep until the rest falls there.
  for (let keep = 0; keep < ordered.length;) {
    cumulative += weight(ordered[keep]!) / total;
    keep++;
    if (cumulative >= topP) return keep;
  }
  return ordered.length;
}

/** A float32's bits, read through one shared word. */
const orderValue = new Float32Array(1);
const orderWord = new Uint32Array(orderValue.buffer);

interface Sliceable<T> {
  readonly length: number;
  subarray(begin: number, end: number): T;
}

/** A typed array kept between calls: `take(n)` is its first `n` values, made anew (twice as large) when too short. */
class WorkingArray<T extends Sliceable<T>> {
  private array?: T;
  constructor(private readonly make: (size: number) => T) {}

  take(n: number): T {
    if (!this.array || this.array.length < n) this.array = this.make(Math.max(n, 2 * (this.array?.length ?? 0)));
    return this.array.subarray(0, n);
  }
}

/**
 * The sampler's working arrays, kept between tokens and grown as rows need (a token's filter, sort and weights
 * allocated six typed arrays a row before): what a call returns is valid until the next call. Sampling runs on one
 * thread, a row at a time.
 */
const scratch = {
  probe: new WorkingArray((n) => new Int32Array(n)),
  keys: new WorkingArray((n) => new Uint32Array(n)),
  nextKeys: new WorkingArray((n) => new Uint32Array(n)),
  ids: new WorkingArray((n) => new Int32Array(n)),
  nextIds: new WorkingArray((n) => new Int32Array(n)),
  counts: new WorkingArray((n) => new Uint32Array(n)),
  drawn: new WorkingArray((n) => new Float64Array(n)),
  rowWeights: new WorkingArray((n) => new Float64Array(n)),
};

/**
 * The ids of `candidates` (all of the row when absent, ascending either way) by log-prob, highest first, equal
 * log-probs in id order: the order a stable sort by `b - a` gives. A least-significant-digit radix sort of the
 * floats' bits, made to order as the values do (stable, so ties keep id order): a comparator sort of a 512-id row
 * took most of a sampled token's time.
 */
export function mostLikelyFirst(logProbs: Float32Array, candidates?: Int32Array): Int32Array {
  return sortMostLikelyFirst(logProbs, candidates).slice();
}

/** `mostLikelyFirst` in the sampler's working arrays (valid until its next call). */
function sortMostLikelyFirst(logProbs: Float32Array, candidates?: Int32Array): Int32Array {
  const n = candidates ? candidates.length : logProbs.length;
  let keys = scratch.keys.take(n);
  let ids = scratch.ids.take(n);
  for (let j = 0; j < n; j++) {
    const id = candidates ? candidates[j]! : j;
    // +0 folds -0 into 0, which the comparator treats as equal.
    orderValue[0] = logProbs[id]! + 0;
    const bits = orderWord[0]!;
    // Ascending keys for descending values: a negative float's bits grow as it falls; positive ones go below every
    // negative one, reversed.
    keys[j] = bits >= 0x80000000 ? bits : 0x7fffffff - bits;
    ids[j] = id;
  }
  let nextKeys = scratch.nextKeys.take(n);
  let nextIds = scratch.nextIds.take(n);
  const counts = scratch.counts.take(256);
  for (let shift = 0; shift < 32; shift += 8) {
    counts.fill(0);
    for (let j = 0; j < n; j++) counts[(keys[j]! >>> shift) & 255]!++;
    for (let b = 0, at = 0; b < 256; b++) {
      const c = counts[b]!;
      counts[b] = at;
      at += c;
    }
    for (let j = 0; j < n; j++) {
      const at = counts[(keys[j]! >>> shift) & 255]!++;
      nextKeys[at] = keys[j]!;
      nextIds[at] = ids[j]!;
    }
    [keys, nextKeys, ids, nextIds] = [nextKeys, keys, nextIds, ids];
  }
  return ids;
}

function drawFrom(
  logProbs: Float32Array,
  candidates: Int32Array | undefined,
  invT: number,
  rng: SeededRandom,
  rowWeights: Float64Array | undefined,
): number {
  const n = candidates ? candidates.length : logProbs.length;
  const at = (j: number): number => (candidates ? candidates[j]! : j);
  const weights = scratch.drawn.take(n);
  let total = 0;
  if (rowWeights) {
    for (let j = 0; j < n; j++) total += weights[j] = rowWeights[at(j)]!;
  } else {
    let max = -Infinity;
    for (let j = 0; j < n; j++) {
      const l = logProbs[at(j)]!;
      if (l > max) max = l;
    }
    for (let j = 0; j < n; j++) total += weights[j] = exp((logProbs[at(j)]! - max) * invT);
  }
  let u = rng.uniform() * total;
  for (let j = 0; j < n; j++) {
    u -= weights[j]!;
    if (u < 0) return at(j);
  }
  for (let j = n - 1; j >= 0; j--) if (weights[j]! > 0) return at(j);
  return at(0);
}

export function argmax(values: Float32Array): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

/** The k-th largest value (1-based). */
function kthLargest(values: Float32Array, k: number): number {
  if (k <= 64) {
    const top = new Float32Array(k).fill(-Infinity);
    for (let i = 0; i < values.length; i++) {
      const x = values[i]!;
      if (x <= top[k - 1]!) continue;
      let j = k - 1;
      for (; j > 0 && top[j - 1]! < x; j--) top[j] = top[j - 1]!;
      top[j] = x;
    }
    return top[k - 1]!;
  }
  return Float32Array.from(values).sort().reverse()[k - 1]!;
}
