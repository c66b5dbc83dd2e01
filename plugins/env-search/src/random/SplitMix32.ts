/** FNV-1a hash of a label, used to derive independent streams from one seed. */
export function hashLabel(label: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/**
 * splitmix32: a tiny seeded generator, identical on every machine. `fork(label)` gives an independent stream per
 * purpose, so adding a consumer of randomness does not shift the numbers the others draw.
 */
export class SplitMix32 {
  private state: number;

  constructor(seed: number) {
    if (!Number.isFinite(seed)) throw new RangeError(`SplitMix32: seed must be a finite number, got ${seed}`);
    this.state = Math.trunc(seed) >>> 0;
  }

  nextUint32(): number {
    this.state = (this.state + 0x9e3779b9) >>> 0;
    let z = this.state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  }

  /** Uniform in [0, 1). */
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

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('SplitMix32.pick: cannot pick from an empty list');
    return items[this.int(items.length)]!;
  }

  /** Fisher-Yates shuffle in place; returns `items`. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const t = items[i]!;
      items[i] = items[j]!;
      items[j] = t;
    }
    return items;
  }

  fork(label: string): SplitMix32 {
    return new SplitMix32((this.nextUint32() ^ hashLabel(label)) >>> 0);
  }

  /** A stream that depends only on `seed` and `label` (not on draws made so far). */
  static derive(seed: number, label: string): SplitMix32 {
    const base = new SplitMix32(seed);
    return new SplitMix32((base.nextUint32() ^ hashLabel(label)) >>> 0);
  }
}
