import { createToken } from '../di/Token.js';
import { fnv1a } from './hash.js';
import { SplitMix32 } from './SplitMix32.js';

// Module-level bindings: a global lookup of `Math` per call is slow inside vm contexts (jest), and model
// initialisation draws millions of numbers.
const { imul } = Math;

/** The state of an `Rng`, enough to continue its sequence exactly (saved in checkpoints). */
export type RngState = [number, number, number, number];

/**
 * A seeded generator (xoshiro128**): the same seed gives the same sequence on every machine. `fork(label)`
 * derives an independent stream per purpose so adding a consumer does not shift the others.
 */
export interface Rng {
  nextUint32(): number;
  next(): number;
  int(n: number): number;
  normal(): number;
  shuffle<T>(items: T[]): T[];
  fork(label: string): Rng;
  getState(): RngState;
  setState(state: RngState): void;
}

export class SeededRng implements Rng {
  /** The state words as int32, so V8 keeps them unboxed; `getState` gives them unsigned. */
  private s: Int32Array;

  constructor(seed: number | RngState) {
    if (Array.isArray(seed)) {
      this.s = stateWords(seed);
    } else {
      const seeder = new SplitMix32(seed);
      this.s = Int32Array.from([seeder.nextUint32(), seeder.nextUint32(), seeder.nextUint32(), seeder.nextUint32()]);
    }
    if (this.s.every((x) => x === 0)) this.s[0] = 1;
  }

  /** A uniform 32-bit unsigned integer. */
  nextUint32(): number {
    const s = this.s;
    const s0 = s[0]!;
    const s1 = s[1]!;
    const s2 = s[2]! ^ s0;
    const s3 = s[3]! ^ s1;
    const r = imul(s1, 5);
    const result = imul((r << 7) | (r >>> 25), 9) >>> 0;
    s[0] = s0 ^ s3;
    s[1] = s1 ^ s2;
    s[2] = s2 ^ (s1 << 9);
    s[3] = (s3 << 11) | (s3 >>> 21);
    return result;
  }

  /** Uniform in [0, 1) with 53 random bits. */
  next(): number {
    const hi = this.nextUint32() >>> 5;
    const lo = this.nextUint32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Standard normal (Box-Muller). */
  normal(): number {
    let u = 0;
    while (u === 0) u = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }

  /** Fisher-Yates shuffle in place. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [items[i], items[j]] = [items[j]!, items[i]!];
    }
    return items;
  }

  /** An independent generator for one purpose, derived from this one's current state and the label. */
  fork(label: string): SeededRng {
    const [s0, s1, s2, s3] = this.getState();
    const seeder = new SplitMix32((s0 ^ fnv1a(label) ^ Math.imul(s2, 0x9e3779b1)) >>> 0);
    const next = () => seeder.nextUint32();
    return new SeededRng([next() ^ s1, next() ^ s3, next(), next()].map((x) => x >>> 0) as RngState);
  }

  getState(): RngState {
    return Array.from(this.s, (word) => word >>> 0) as RngState;
  }

  setState(state: RngState): void {
    this.s = stateWords(state);
  }
}

/** The four state words; `nextUint32` reads them unchecked, so a state of another length (a damaged checkpoint) is refused here. */
function stateWords(state: readonly number[]): Int32Array {
  if (!Array.isArray(state) || state.length !== 4) {
    throw new Error(`an Rng state is 4 numbers; got ${Array.isArray(state) ? `${state.length} entries` : typeof state}`);
  }
  return Int32Array.from(state);
}

export const Rng = createToken<Rng>('Rng', { label: 'random generator' });
