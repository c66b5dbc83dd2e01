/** out[r][t] = rowValues[r] * mask[r][t]: a per-row advantage broadcast over its tokens. */
export function broadcastRows(rowValues: ArrayLike<number>, mask: ArrayLike<number>, rows: number, cols: number): Float64Array {
  const out = new Float64Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    const v = rowValues[r]!;
    const base = r * cols;
    for (let t = 0; t < cols; t++) out[base + t] = v * mask[base + t]!;
  }
  return out;
}
