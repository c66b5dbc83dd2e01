import type { TensorOps } from '@drmas/core';

/**
 * TensorOps over plain float64 arrays (shape [rows, cols], [rows], [rows, 1] or scalar), to evaluate a loss without an
 * engine. Binary operations take equal sizes, a scalar, or a column `[rows, 1]` against `[rows, cols]` (numpy's
 * broadcast of one value per row); there is no gradient (`stopGradient` is the identity).
 */
export interface Arr {
  shape: number[];
  data: Float64Array;
}

export const arr = (rows: number[][]): Arr => ({ shape: [rows.length, rows[0]?.length ?? 0], data: Float64Array.from(rows.flat()) });

function binary(f: (x: number, y: number) => number) {
  return (a: Arr, b: Arr | number): Arr => {
    const other = typeof b === 'number' ? { shape: [], data: Float64Array.of(b) } : b;
    const [big, small, swap] = a.data.length >= other.data.length ? [a, other, false] : [other, a, true];
    const column = small.shape.length === 2 && small.shape[1] === 1 && big.shape.length === 2 && small.shape[0] === big.shape[0];
    if (small.data.length !== 1 && small.data.length !== big.data.length && !column) throw new Error('shape mismatch');
    const cols = big.shape[1] ?? 1;
    const at = (i: number) => (small.data.length === 1 ? 0 : column ? Math.floor(i / cols) : i);
    const data = big.data.map((v, i) => {
      const w = small.data[at(i)]!;
      return swap ? f(w, v) : f(v, w);
    });
    return { shape: big.shape, data };
  };
}

const unary =
  (f: (x: number) => number) =>
  (a: Arr): Arr => ({ shape: a.shape, data: a.data.map(f) });

export const numberOps: TensorOps<Arr> = {
  add: binary((x, y) => x + y),
  sub: binary((x, y) => x - y),
  mul: binary((x, y) => x * y),
  div: binary((x, y) => x / y),
  minimum: binary(Math.min),
  maximum: binary(Math.max),
  greater: binary((x, y) => (x > y ? 1 : 0)),
  less: binary((x, y) => (x < y ? 1 : 0)),
  neg: unary((x) => -x),
  exp: unary(Math.exp),
  log: unary(Math.log),
  abs: unary(Math.abs),
  square: unary((x) => x * x),
  clip: (a, lo, hi) => unary((x) => Math.min(Math.max(x, lo), hi))(a),
  sum: (a, axis) => {
    if (axis === undefined) return { shape: [], data: Float64Array.of(a.data.reduce((s, x) => s + x, 0)) };
    const [rows, cols] = a.shape;
    if (rows === undefined || cols === undefined || axis !== 1)
      throw new Error(`sum over axis 1 needs a [rows, cols] array, got axis ${axis} of [${a.shape.join(', ')}]`);
    return {
      shape: [rows],
      data: Float64Array.from({ length: rows }, (_, r) => a.data.slice(r * cols, (r + 1) * cols).reduce((s, x) => s + x, 0)),
    };
  },
  reshape: (a, shape) => {
    const known = shape.filter((d) => d !== -1).reduce((p, d) => p * d, 1);
    const out = shape.map((d) => (d === -1 ? a.data.length / known : d));
    if (!out.every(Number.isInteger) || out.reduce((p, d) => p * d, 1) !== a.data.length)
      throw new Error(`cannot reshape [${a.shape.join(', ')}] to [${shape.join(', ')}]`);
    return { shape: out, data: a.data };
  },
  stopGradient: (a) => a,
  scalar: (v) => ({ shape: [], data: Float64Array.of(v) }),
};
