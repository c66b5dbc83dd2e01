import { AlgorithmInputError } from '../errors.js';

/** Integer-coded ids: `codes[row]` in `[0, count)`. */
export interface Coding {
  readonly codes: Int32Array;
  readonly count: number;
}

/** Codes ids (strings or numbers) by order of first appearance. */
export function encodeIds(ids: ArrayLike<string | number>, key: string, rows: number): Coding {
  if (ids === undefined || ids === null || typeof (ids as { length?: unknown }).length !== 'number') {
    throw new AlgorithmInputError(key, `expected an array of ${rows} ids`);
  }
  if (ids.length !== rows) throw new AlgorithmInputError(key, `has ${ids.length} entries, expected ${rows} (one per row)`);
  const codes = new Int32Array(rows);
  const seen = new Map<string | number, number>();
  for (let i = 0; i < rows; i++) {
    const id = ids[i];
    if (typeof id !== 'string' && typeof id !== 'number') {
      throw new AlgorithmInputError(key, `entry ${i} is ${id === null ? 'null' : typeof id}; expected a string or number id`);
    }
    let code = seen.get(id);
    if (code === undefined) {
      code = seen.size;
      seen.set(id, code);
    }
    codes[i] = code;
  }
  return { codes, count: seen.size };
}

/** Accepts integer group codes as given (the columnar path); sparse codes are compacted. */
export function integerCoding(codes: ArrayLike<number>, key: string, rows: number): Coding {
  if (codes === undefined || codes === null || typeof (codes as { length?: unknown }).length !== 'number') {
    throw new AlgorithmInputError(key, `expected ${rows} integer codes`);
  }
  if (codes.length !== rows) throw new AlgorithmInputError(key, `has ${codes.length} entries, expected ${rows} (one per row)`);
  let max = -1;
  for (let i = 0; i < rows; i++) {
    const c = codes[i];
    if (c === undefined || !Number.isInteger(c) || c < 0 || c > 0x7fffffff) {
      throw new AlgorithmInputError(key, `entry ${i} is ${c}; expected a non-negative integer code`);
    }
    if (c > max) max = c;
  }
  if (max + 1 <= 4 * rows + 16) {
    return { codes: codes instanceof Int32Array ? codes : Int32Array.from(codes), count: max + 1 };
  }
  return encodeIds(codes, key, rows);
}

/** The coding of the pair (a, b), by order of first appearance. */
export function combineCodings(a: Coding, b: Coding): Coding {
  const rows = a.codes.length;
  const out = new Int32Array(rows);
  const dense = a.count * b.count;
  if (dense <= 4 * rows + 16) {
    const table = new Int32Array(dense).fill(-1);
    let count = 0;
    for (let i = 0; i < rows; i++) {
      const k = a.codes[i]! * b.count + b.codes[i]!;
      let code = table[k]!;
      if (code < 0) code = table[k] = count++;
      out[i] = code;
    }
    return { codes: out, count };
  }
  const seen = new Map<number, number>();
  for (let i = 0; i < rows; i++) {
    const k = a.codes[i]! * b.count + b.codes[i]!;
    let code = seen.get(k);
    if (code === undefined) {
      code = seen.size;
      seen.set(k, code);
    }
    out[i] = code;
  }
  return { codes: out, count: seen.size };
}
