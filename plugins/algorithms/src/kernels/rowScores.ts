/** Row score r_i = sum of token rewards over all positions (the mask is not applied, as in veRL's `token_level_rewards.sum(-1)`). */
export function rowSums(data: ArrayLike<number>, rows: number, cols: number): Float64Array {
  const out = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let s = 0;
    const base = r * cols;
    for (let t = 0; t < cols; t++) s += data[base + t]!;
    out[r] = s;
  }
  return out;
}

/** Per-row sum of the mask (response length). */
export const maskLengths = rowSums;
