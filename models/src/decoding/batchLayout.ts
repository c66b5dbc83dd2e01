/**
 * The batch layout shared by generation, scoring and training: rows left-padded to a common length so that the
 * last prompt token of every row sits in the same column. Padding is hidden from attention; positions count real
 * tokens only (0 at a row's first token), as transformers' generate does with left padding.
 */
export interface LeftPaddedBatch {
  rows: number;
  columns: number;
  /** `[rows * columns]`, 0 at padding. */
  ids: Int32Array;
  /** `[rows * columns]`, 1 at real tokens. */
  valid: Uint8Array;
  /** `[rows * columns]`. */
  positions: Int32Array;
  /** Padding columns at the start of each row. */
  padding: number[];
  /** Real tokens per row. */
  lengths: number[];
}

export function leftPad(sequences: ArrayLike<number>[], columns?: number): LeftPaddedBatch {
  const rows = sequences.length;
  const width = columns ?? Math.max(1, ...sequences.map((s) => s.length));
  const ids = new Int32Array(rows * width);
  const valid = new Uint8Array(rows * width);
  const positions = new Int32Array(rows * width);
  const padding: number[] = [];
  const lengths: number[] = [];
  for (let r = 0; r < rows; r++) {
    const seq = sequences[r]!;
    const pad = width - seq.length;
    if (pad < 0) throw new RangeError(`row ${r} has ${seq.length} tokens, more than the ${width} columns`);
    padding.push(pad);
    lengths.push(seq.length);
    for (let j = 0; j < seq.length; j++) {
      const o = r * width + pad + j;
      ids[o] = seq[j]!;
      valid[o] = 1;
      positions[o] = j;
    }
  }
  return { rows, columns: width, ids, valid, positions, padding, lengths };
}

/** The distinct sequences of a batch, in first-seen order, and which of them each row is. */
export interface DistinctSequences<T extends ArrayLike<number>> {
  distinct: T[];
  /** `[rows]`: the index in `distinct` of each row's sequence. */
  of: Int32Array;
}

/**
 * Groups equal sequences (the samples of one prompt): a generate call prefills each distinct prompt once and gives
 * its rows copies of the keys and values. Equal means the same ids in the same order.
 */
export function distinctSequences<T extends ArrayLike<number>>(sequences: readonly T[]): DistinctSequences<T> {
  const index = new Map<string, number>();
  const distinct: T[] = [];
  const of = new Int32Array(sequences.length);
  sequences.forEach((sequence, r) => {
    const key = Array.prototype.join.call(sequence, ',');
    let at = index.get(key);
    if (at === undefined) {
      at = distinct.length;
      index.set(key, at);
      distinct.push(sequence);
    }
    of[r] = at;
  });
  return { distinct, of };
}
