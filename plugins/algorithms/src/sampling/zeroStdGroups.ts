import { encodeIds, type Coding } from '../grouping/coding.js';
import { toRowVector, type RowVector } from '../matrix.js';

export interface ZeroStdGroupSummary {
  /** Zero-variance groups / groups (veRL metric `frac_reward_zero_std`); 0 for an empty batch. */
  readonly fracRewardZeroStd: number;
  readonly zeroStdGroupCount: number;
  readonly groupCount: number;
  /** Per row: 0 if its group has zero variance (its advantages are all 0 and add nothing but dilution), else 1. */
  readonly rowMask: number[];
}

/** Per group: true when it has at least two rows and all their scores are equal (within `tolerance`). */
export function zeroStdGroupFlags(scores: ArrayLike<number>, groups: Coding, tolerance = 0): Uint8Array {
  const min = new Float64Array(groups.count).fill(Infinity);
  const max = new Float64Array(groups.count).fill(-Infinity);
  const size = new Int32Array(groups.count);
  for (let r = 0; r < scores.length; r++) {
    const g = groups.codes[r]!;
    const score = scores[r]!;
    size[g]!++;
    if (score < min[g]!) min[g] = score;
    if (score > max[g]!) max[g] = score;
  }
  const flags = new Uint8Array(groups.count);
  for (let g = 0; g < groups.count; g++) flags[g] = size[g]! >= 2 && max[g]! - min[g]! <= tolerance ? 1 : 0;
  return flags;
}

export function summarizeZeroStdGroups(scores: ArrayLike<number>, groups: Coding, tolerance = 0): ZeroStdGroupSummary {
  const flags = zeroStdGroupFlags(scores, groups, tolerance);
  const present = new Uint8Array(groups.count);
  for (let r = 0; r < scores.length; r++) present[groups.codes[r]!] = 1;
  let groupCount = 0;
  let zero = 0;
  for (let g = 0; g < groups.count; g++) {
    if (!present[g]) continue;
    groupCount++;
    zero += flags[g]!;
  }
  const rowMask = new Array<number>(scores.length);
  for (let r = 0; r < scores.length; r++) rowMask[r] = flags[groups.codes[r]!] ? 0 : 1;
  return { fracRewardZeroStd: groupCount === 0 ? 0 : zero / groupCount, zeroStdGroupCount: zero, groupCount, rowMask };
}

/**
 * Counts zero-variance groups: groups of two or more rows whose episode rewards are all equal (a group of one
 * is not counted). Returns `frac_reward_zero_std` and a row mask that excludes those groups from the loss.
 */
export function zeroStdGroups(
  rowRewards: RowVector,
  groupIds: ArrayLike<string | number>,
  options: { tolerance?: number } = {},
): ZeroStdGroupSummary {
  const rows = groupIds.length;
  const scores = toRowVector(rowRewards, 'rowRewards', rows);
  return summarizeZeroStdGroups(scores, encodeIds(groupIds, 'groupIds', rows), options.tolerance ?? 0);
}
