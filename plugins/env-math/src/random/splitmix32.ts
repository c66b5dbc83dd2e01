/** splitmix32: a 32-bit generator whose whole state is one integer, so a task can be regenerated from a hash alone. */
export function splitmix32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/** Uniform draws on top of splitmix32. */
export class SeededRandom {
  private readonly nextUint32: () => number;

  constructor(seed: number) {
    this.nextUint32 = splitmix32(seed);
  }

  uint32(): number {
    return this.nextUint32();
  }

  /** In [0, 1). */
  float(): number {
    return this.nextUint32() / 4294967296;
  }

  /** An integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.float() * (max - min + 1));
  }

  /** One of `items`, which must not be empty. */
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.float() * items.length)]!;
  }
}
