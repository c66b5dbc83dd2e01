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
