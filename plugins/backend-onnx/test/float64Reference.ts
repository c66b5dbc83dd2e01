/**
 * A tiny float64 n-d array library: the independent reference the graph ops' gradients are checked against (by
 * central finite differences of these functions). Written for clarity, not speed.
 */
export interface Nd {
  shape: number[];
  data: Float64Array;
}

export function nd(shape: number[], data: ArrayLike<number>): Nd {
  return { shape: [...shape], data: Float64Array.from(data) };
}

const size = (shape: number[]) => shape.reduce((a, b) => a * b, 1);

function strides(shape: number[]): number[] {
  const s = new Array<number>(shape.length).fill(1);
  for (let i = shape.length - 2; i >= 0; i--) s[i] = s[i + 1]! * shape[i + 1]!;
  return s;
}

/** Multi-index of flat position `flat` in `shape`. */
function unravel(flat: number, shape: number[]): number[] {
  const idx = new Array<number>(shape.length);
  for (let i = shape.length - 1; i >= 0; i--) {
    idx[i] = flat % shape[i]!;
    flat = Math.floor(flat / shape[i]!);
  }
  return idx;
}

/** Flat position in `a` of the (right-aligned, broadcast) multi-index `idx` of a larger shape. */
function at(a: Nd, idx: number[]): number {
  const st = strides(a.shape);
  const lead = idx.length - a.shape.length;
  let o = 0;
  a.shape.forEach((d, i) => (o += (d === 1 ? 0 : idx[lead + i]!) * st[i]!));
  return o;
}

export function broadcastShape(...shapes: number[][]): number[] {
  const rank = Math.max(...shapes.map((s) => s.length));
  return Array.from({ length: rank }, (_, i) => Math.max(...shapes.map((s) => s[s.length - rank + i] ?? 1)));
}

export function map(inputs: Nd[], fn: (...x: number[]) => number): Nd {
  const shape = broadcastShape(...inputs.map((x) => x.shape));
  const out = new Float64Array(size(shape));
  for (let f = 0; f < out.length; f++) {
    const idx = unravel(f, shape);
    out[f] = fn(...inputs.map((x) => x.data[at(x, idx)]!));
  }
  return { shape, data: out };
}

export function expand(a: Nd, shape: number[]): Nd {
  return map([a, { shape, data: new Float64Array(size(shape)) }], (x) => x);
}

export function matmul(a: Nd, b: Nd): Nd {
  const [m, k] = a.shape.slice(-2) as [number, number];
  const n = b.shape[b.shape.length - 1]!;
  const batch = broadcastShape(a.shape.slice(0, -2), b.shape.slice(0, -2));
  const out = new Float64Array(size(batch) * m * n);
  const ab = { shape: a.shape.slice(0, -2), data: a.data };
  const bb = { shape: b.shape.slice(0, -2), data: b.data };
  for (let t = 0; t < size(batch); t++) {
    const idx = unravel(t, batch);
    const ao = at(ab, idx) * m * k;
    const bo = at(bb, idx) * k * n;
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let s = 0;
        for (let q = 0; q < k; q++) s += a.data[ao + i * k + q]! * b.data[bo + q * n + j]!;
        out[t * m * n + i * n + j] = s;
      }
    }
  }
  return { shape: [...batch, m, n], data: out };
}

export function transpose(a: Nd, perm: number[]): Nd {
  const shape = perm.map((p) => a.shape[p]!);
  const st = strides(a.shape);
  const out = new Float64Array(a.data.length);
  for (let f = 0; f < out.length; f++) {
    const idx = unravel(f, shape);
    let o = 0;
    perm.forEach((p, i) => (o += idx[i]! * st[p]!));
    out[f] = a.data[o]!;
  }
  return { shape, data: out };
}

export function reshape(a: Nd, shape: number[]): Nd {
  return { shape, data: a.data.slice() };
}

export function reduce(a: Nd, axes: number[] | undefined, keepdims: boolean, kind: 'sum' | 'mean' | 'max'): Nd {
  const rank = a.shape.length;
  const all = (axes ?? a.shape.map((_, i) => i)).map((x) => (x < 0 ? x + rank : x));
  const kept = a.shape.map((d, i) => (all.includes(i) ? 1 : d));
  const out = new Float64Array(size(kept)).fill(kind === 'max' ? -Infinity : 0);
  const count = size(a.shape) / size(kept);
  for (let f = 0; f < a.data.length; f++) {
    const idx = unravel(f, a.shape).map((v, i) => (all.includes(i) ? 0 : v));
    const o = at({ shape: kept, data: out }, idx);
    out[o] = kind === 'max' ? Math.max(out[o]!, a.data[f]!) : out[o]! + a.data[f]! / (kind === 'mean' ? count : 1);
  }
  return { shape: keepdims ? kept : a.shape.filter((_, i) => !all.includes(i)), data: out };
}

/** Softmax (or log-softmax) over the last axis. */
export function softmax(a: Nd, log = false): Nd {
  const n = a.shape[a.shape.length - 1]!;
  const out = new Float64Array(a.data.length);
  for (let r = 0; r < a.data.length / n; r++) {
    const row = a.data.subarray(r * n, (r + 1) * n);
    const max = Math.max(...row);
    const total = row.reduce((s, v) => s + Math.exp(v - max), 0);
    row.forEach((v, j) => (out[r * n + j] = log ? v - max - Math.log(total) : Math.exp(v - max) / total));
  }
  return { shape: a.shape, data: out };
}

/** `a[..., start:end, ...]` along one axis, bounds clamped like ONNX Slice. */
export function slice(a: Nd, axis: number, start: number, end: number): Nd {
  const rank = a.shape.length;
  const ax = axis < 0 ? axis + rank : axis;
  const dim = a.shape[ax]!;
  const clamp = (v: number) => Math.min(dim, Math.max(0, v < 0 ? v + dim : v));
  const begin = clamp(start);
  const shape = [...a.shape];
  shape[ax] = Math.max(0, clamp(end) - begin);
  const out = new Float64Array(size(shape));
  for (let f = 0; f < out.length; f++) {
    const idx = unravel(f, shape);
    idx[ax] = idx[ax]! + begin;
    out[f] = a.data[at(a, idx)]!;
  }
  return { shape, data: out };
}

export function concat(parts: Nd[], axis: number): Nd {
  const rank = parts[0]!.shape.length;
  const ax = axis < 0 ? axis + rank : axis;
  const shape = [...parts[0]!.shape];
  shape[ax] = parts.reduce((s, p) => s + p.shape[ax]!, 0);
  const out = new Float64Array(size(shape));
  for (let f = 0; f < out.length; f++) {
    const idx = unravel(f, shape);
    let k = 0;
    while (idx[ax]! >= parts[k]!.shape[ax]!) idx[ax] = idx[ax]! - parts[k++]!.shape[ax]!;
    out[f] = parts[k]!.data[at(parts[k]!, idx)]!;
  }
  return { shape, data: out };
}

/** Rows of `table` (`[n, ...]`) picked by `ids` (any shape). */
export function gatherRows(table: Nd, ids: Nd): Nd {
  const row = size(table.shape.slice(1));
  const out = new Float64Array(ids.data.length * row);
  ids.data.forEach((id, i) => out.set(table.data.subarray(id * row, (id + 1) * row), i * row));
  return { shape: [...ids.shape, ...table.shape.slice(1)], data: out };
}

/** ONNX GatherElements. */
export function gatherElements(data: Nd, indices: Nd, axis: number): Nd {
  const ax = axis < 0 ? axis + data.shape.length : axis;
  const out = new Float64Array(indices.data.length);
  for (let f = 0; f < out.length; f++) {
    const idx = unravel(f, indices.shape);
    idx[ax] = indices.data[f]!;
    out[f] = data.data[at(data, idx)]!;
  }
  return { shape: indices.shape, data: out };
}
