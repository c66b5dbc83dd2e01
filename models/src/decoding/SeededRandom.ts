import { SeededRng } from '@drmas/core';

/**
 * Deterministic random numbers for weight initialisation and sampling: core's xoshiro128** (`SeededRng`), its state
 * drawn by splitmix32 from `seed ^ 0x9e3779b9` (the seeding every saved sampling stream and initialisation was made
 * with), normals by Box-Muller using both values of a pair. The same seed gives the same stream on every platform.
 */
// Module-level bindings: a global lookup of `Math` per call is slow inside vm contexts (jest).
const { log, sqrt, cos, sin, PI, trunc } = Math;

const SEED_MIX = 0x9e3779b9;

export class SeededRandom {
  private readonly bits: SeededRng;
  /** The second value of the last Box-Muller pair, NaN when used. */
  private spareNormal = Number.NaN;

  constructor(seed: number) {
    this.bits = new SeededRng((trunc(seed) ^ SEED_MIX) >>> 0);
  }

  /** Next 32 random bits as an unsigned integer. */
  nextUint32(): number {
    return this.bits.nextUint32();
  }

  /** Uniform in [0, 1) with 53 random bits. */
  uniform(): number {
    return this.bits.next();
  }

  normal(): number {
    if (!Number.isNaN(this.spareNormal)) {
      const value = this.spareNormal;
      this.spareNormal = Number.NaN;
      return value;
    }
    let u = 0;
    while (u === 0) u = this.uniform();
    const v = this.uniform();
    const radius = sqrt(-2 * log(u));
    this.spareNormal = radius * sin(2 * PI * v);
    return radius * cos(2 * PI * v);
  }

  /** Fills with normal(0, std); the same stream as calling `normal()` repeatedly. */
  fillNormal(out: Float32Array, std: number): Float32Array {
    let i = 0;
    if (!Number.isNaN(this.spareNormal) && out.length > 0) out[i++] = this.normal() * std;
    for (; i + 1 < out.length; i += 2) {
      let u = 0;
      while (u === 0) u = this.uniform();
      const v = this.uniform();
      const radius = sqrt(-2 * log(u)) * std;
      const angle = 2 * PI * v;
      out[i] = radius * cos(angle);
      out[i + 1] = radius * sin(angle);
    }
    if (i < out.length) out[i] = this.normal() * std;
    return out;
  }
}

/**
 * The sampling streams of a generate call, one per row, each seeded by the call's seed (or the row's own, `rowSeeds`)
 * and the row's key (its position in the call unless the request gives `rowKeys`): a row draws the same numbers
 * whichever rows share its call.
 */
export function rowStreams(seed: number, rows: number, rowKeys?: readonly number[], rowSeeds?: readonly number[]): SeededRandom[] {
  if (rowKeys && rowKeys.length !== rows) throw new RangeError(`rowKeys has ${rowKeys.length} keys for ${rows} rows`);
  if (rowSeeds && rowSeeds.length !== rows) throw new RangeError(`rowSeeds has ${rowSeeds.length} seeds for ${rows} rows`);
  return Array.from({ length: rows }, (_, r) => new SeededRandom(streamSeed(rowSeeds ? rowSeeds[r]! : seed, rowKeys ? rowKeys[r]! : r)));
}

const SEED_FACTOR = 7919;
const KEY_FACTOR = 104729;
/** KEY_FACTOR's inverse modulo 2^32 (it is odd): `Math.imul(KEY_FACTOR, KEY_INVERSE) === 1`. */
const KEY_INVERSE = (() => {
  let inverse = KEY_FACTOR; // Newton's iteration doubles the correct low bits each round: 3, 6, 12, 24, 48.
  for (let i = 0; i < 4; i++) inverse = Math.imul(inverse, 2 - Math.imul(KEY_FACTOR, inverse));
  return inverse >>> 0;
})();

/** SEED_FACTOR's inverse modulo 2^32 (it is odd), by the same iteration. */
const SEED_INVERSE = (() => {
  let inverse = SEED_FACTOR;
  for (let i = 0; i < 4; i++) inverse = Math.imul(inverse, 2 - Math.imul(SEED_FACTOR, inverse));
  return inverse >>> 0;
})();

function streamSeed(seed: number, key: number): number {
  return seed * SEED_FACTOR + key * KEY_FACTOR + 1;
}

/**
 * The key that gives a row of a call seeded `callSeed` the stream it would have with key `rowKey` in a call seeded
 * `rowSeed`, so requests made with different seeds can share one generate call (an async executor micro-batching
 * agent calls of several episodes) and each row still samples what it samples alone. Seeds and keys are uint32.
 */
export function rowKeyForSeed(callSeed: number, rowSeed: number, rowKey: number): number {
  // Streams are seeded modulo 2^32 (SeededRandom takes the low 32 bits), so the key absorbs the seeds' difference.
  return (rowKey + Math.imul(Math.imul((rowSeed - callSeed) | 0, SEED_FACTOR), KEY_INVERSE)) >>> 0;
}

/**
 * The seed whose one-row call (key 0) draws the stream row `rowKey` draws in a call seeded `seed`, so a row sent alone
 * with that seed (one HTTP request per row to a server that takes a per-request seed) samples what it samples in the
 * whole call. Seeds and keys are uint32; the answer too.
 */
export function seedForRowKey(seed: number, rowKey: number): number {
  // seed' * SEED_FACTOR = seed * SEED_FACTOR + rowKey * KEY_FACTOR (mod 2^32).
  return (seed + Math.imul(Math.imul(rowKey | 0, KEY_FACTOR), SEED_INVERSE)) >>> 0;
}
