import { AlgorithmInputError } from './errors.js';

/** A row-major `[rows][tokens]` matrix: `number[][]`, `Float64Array[]`, `Float32Array[]`, ... */
export type Matrix = ReadonlyArray<ArrayLike<number>>;

/** A flat row-major buffer, as used by the columnar fast path. */
export type FloatBuffer = Float64Array | Float32Array;

/** Per-row numbers: plain array or typed array. */
export type RowVector = ArrayLike<number>;

/** A flat buffer with its shape. */
export interface FlatMatrix {
  readonly data: Float64Array;
  readonly rows: number;
  readonly cols: number;
}

/** Number of columns of a matrix, checking that it is rectangular. */
export function matrixCols(m: Matrix, key: string): number {
  if (m.length === 0) return 0;
  const cols = m[0]!.length;
  for (let r = 1; r < m.length; r++) {
    const length = m[r]!.length;
    if (length !== cols) {
      throw new AlgorithmInputError(key, `row ${r} has ${length} tokens but row 0 has ${cols}; rows must be padded to one length`);
    }
  }
  return cols;
}

/** Copies a matrix into a flat float64 buffer, checking its shape against `rows` x `cols` when given. */
export function flattenMatrix(m: Matrix, key: string, rows?: number, cols?: number, requireFinite = false): FlatMatrix {
  if (m === undefined || m === null || typeof m !== 'object' || typeof (m as { length?: unknown }).length !== 'number') {
    throw new AlgorithmInputError(key, 'expected a matrix [rows][tokens]');
  }
  const c = matrixCols(m, key);
  if (rows !== undefined && m.length !== rows) {
    throw new AlgorithmInputError(key, `has ${m.length} rows, expected ${rows}`);
  }
  if (cols !== undefined && m.length > 0 && c !== cols) {
    throw new AlgorithmInputError(key, `has ${c} tokens per row, expected ${cols}`);
  }
  const n = m.length;
  const width = n === 0 ? (cols ?? 0) : c;
  const data = new Float64Array(n * width);
  for (let r = 0; r < n; r++) {
    const row = m[r]!;
    const base = r * width;
    if (requireFinite) {
      for (let t = 0; t < width; t++) {
        const v = row[t];
        if (typeof v !== 'number' || !Number.isFinite(v)) {
          throw new AlgorithmInputError(key, `entry [${r}][${t}] is ${String(v)}; expected a finite number`);
        }
        data[base + t] = v;
      }
    } else {
      for (let t = 0; t < width; t++) data[base + t] = row[t]!;
    }
  }
  return { data, rows: n, cols: width };
}

/** Splits a flat buffer into `number[][]`. */
export function unflatten(data: ArrayLike<number>, rows: number, cols: number): number[][] {
  const out = new Array<number[]>(rows);
  for (let r = 0; r < rows; r++) {
    const row = new Array<number>(cols);
    const base = r * cols;
    for (let t = 0; t < cols; t++) row[t] = data[base + t]!;
    out[r] = row;
  }
  return out;
}

/** Copies a per-row vector into float64, checking its length. */
export function toRowVector(v: RowVector, key: string, rows: number): Float64Array {
  if (v === undefined || v === null || typeof (v as { length?: unknown }).length !== 'number') {
    throw new AlgorithmInputError(key, `expected an array of ${rows} numbers`);
  }
  if (v.length !== rows) throw new AlgorithmInputError(key, `has ${v.length} entries, expected ${rows} (one per row)`);
  const out = new Float64Array(rows);
  for (let i = 0; i < rows; i++) out[i] = v[i]!;
  return out;
}

/** Checks that two matrices have the same shape. */
export function checkSameShape(a: Matrix, aKey: string, b: Matrix, bKey: string): { rows: number; cols: number } {
  const cols = matrixCols(a, aKey);
  const colsB = matrixCols(b, bKey);
  if (a.length !== b.length) throw new AlgorithmInputError(bKey, `has ${b.length} rows but ${aKey} has ${a.length}`);
  if (a.length > 0 && cols !== colsB) throw new AlgorithmInputError(bKey, `has ${colsB} tokens per row but ${aKey} has ${cols}`);
  return { rows: a.length, cols };
}
