/** Per-group size, mean and unbiased std of samples. */
export interface GroupStatistics {
  readonly size: Int32Array;
  readonly mean: Float64Array;
  readonly std: Float64Array;
}

/**
 * Mean and unbiased (n-1) standard deviation of `samples` per group, two-pass.
 * Groups of one follow veRL's `compute_grpo_outcome_advantage`: mean 0 and std 1 (`singleton: 'zero'`);
 * verl-agent's `step_norm_reward` instead uses the sample itself as the mean (`singleton: 'self'`).
 */
export function groupStatistics(
  samples: ArrayLike<number>,
  groupOf: ArrayLike<number>,
  groupCount: number,
  singleton: 'zero' | 'self' = 'zero',
): GroupStatistics {
  const n = samples.length;
  const size = new Int32Array(groupCount);
  const mean = new Float64Array(groupCount);
  const std = new Float64Array(groupCount);
  for (let i = 0; i < n; i++) {
    const g = groupOf[i]!;
    size[g]!++;
    mean[g]! += samples[i]!;
  }
  for (let g = 0; g < groupCount; g++) {
    const count = size[g]!;
    if (count > 0) mean[g]! /= count;
  }
  for (let i = 0; i < n; i++) {
    const g = groupOf[i]!;
    const d = samples[i]! - mean[g]!;
    std[g]! += d * d;
  }
  for (let g = 0; g < groupCount; g++) {
    const count = size[g]!;
    if (count > 1) {
      std[g] = Math.sqrt(std[g]! / (count - 1));
    } else {
      std[g] = 1;
      if (singleton === 'zero') mean[g] = 0;
    }
  }
  return { size, mean, std };
}

/** (x - mean_g) / (std_g + eps) per sample, or x - mean_g without std normalization. */
export function normalizeInGroups(
  samples: ArrayLike<number>,
  groupOf: ArrayLike<number>,
  stats: GroupStatistics,
  normalizeByStd: boolean,
  epsilon: number,
): Float64Array {
  const out = new Float64Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    const g = groupOf[i]!;
    const centered = samples[i]! - stats.mean[g]!;
    out[i] = normalizeByStd ? centered / (stats.std[g]! + epsilon) : centered;
  }
  return out;
}
