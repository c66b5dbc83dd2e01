import { SeededRandom } from './splitmix32.js';

/** 0..n-1 in a Fisher-Yates order drawn from `seed`. */
export function shuffledIndices(n: number, seed: number): Uint32Array {
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  const random = new SeededRandom(seed);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random.float() * (i + 1));
    const t = order[i]!;
    order[i] = order[j]!;
    order[j] = t;
  }
  return order;
}
