import { fmix32, fnv1a } from './hash.js';

/**
 * splitmix32: a 32-bit generator whose whole state is one integer (a Weyl sequence through murmur3's finalizer), so
 * a task can be regenerated from a hash alone (`new SplitMix32(hashParts(...))`), identical on every machine. The
 * environments' task generators draw from it; training's random streams are `SeededRng`'s (xoshiro128**, whose state
 * checkpoints save). `fork(label)` gives an independent stream per purpose.
 */
export class SplitMix32 {
  private state: number;

  constructor(seed: number) {
    if (!Number.isFinite(seed)) throw new RangeError(`SplitMix32: seed must be a finite number, got ${seed}`);
    this.state = Math.trunc(seed) >>> 0;
  }

  nextUint32(): number {
    this.state = (this.state + 0x9e3779b9) >>> 0;
    return fmix32(this.state);
  }

  /** Uniform in [0, 1) (32 random bits). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    if (!Number.isInteger(n) || n <= 0) throw new RangeError(`SplitMix32.int: n must be a positive integer, got ${n}`);
    return Math.floor(this.next() * n);
  }

  /** Uniform integer in [min, max], both included. */
  range(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  /** One of `items`, which must not be empty. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('SplitMix32.pick: cannot pick from an empty list');
    return items[this.int(items.length)]!;
  }

  /** Fisher-Yates shuffle in place; returns `items`. */
  shuffle<A extends { length: number; [index: number]: unknown }>(items: A): A {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const t = items[i];
      items[i] = items[j];
      items[j] = t;
    }
    return items;
  }

  fork(label: string): SplitMix32 {
    return new SplitMix32((this.nextUint32() ^ fnv1a(label)) >>> 0);
  }

  /** A stream that depends only on `seed` and `label` (not on draws made so far). */
  static derive(seed: number, label: string): SplitMix32 {
    return new SplitMix32(seed).fork(label);
  }
}

/** 0..n-1 in the Fisher-Yates order `SplitMix32(seed)` draws. */
export function shuffledIndices(n: number, seed: number): Uint32Array {
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  return new SplitMix32(seed).shuffle(order);
}
