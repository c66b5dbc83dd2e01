import { AlgorithmInputError } from '../errors.js';
import { encodeIds } from '../grouping/coding.js';
import { toRowVector, type RowVector } from '../matrix.js';

export type GroupId = string | number;

export interface GroupSelection {
  /** Groups with differing episode rewards (and, by default, groups of one), in order of first appearance. */
  readonly keptGroupIds: GroupId[];
  /** Groups whose episode rewards are all equal. */
  readonly droppedGroupIds: GroupId[];
  /** Row indices of the kept groups, ascending. */
  readonly keptRows: number[];
}

/**
 * DAPO dynamic sampling (veRL DAPO recipe, `filter_groups`): keep groups whose episode rewards are not all
 * equal. Like the recipe, a group of one is kept unless `keepSingletonGroups` is false.
 */
export function selectGroupsWithVariance(
  episodeRewards: RowVector,
  groupIds: ArrayLike<GroupId>,
  options: { keepSingletonGroups?: boolean } = {},
): GroupSelection {
  const rows = groupIds.length;
  const rewards = toRowVector(episodeRewards, 'episodeRewards', rows);
  const { codes, count } = encodeIds(groupIds, 'groupIds', rows);
  const first = new Int32Array(count).fill(-1);
  const size = new Int32Array(count);
  const varies = new Uint8Array(count);
  for (let r = 0; r < rows; r++) {
    const g = codes[r]!;
    size[g]!++;
    const firstRow = first[g]!;
    if (firstRow < 0) first[g] = r;
    else if (rewards[r] !== rewards[firstRow]) varies[g] = 1;
  }
  const keepSingletons = options.keepSingletonGroups ?? true;
  const keep = new Uint8Array(count);
  const keptGroupIds: GroupId[] = [];
  const droppedGroupIds: GroupId[] = [];
  for (let g = 0; g < count; g++) {
    keep[g] = varies[g] || (keepSingletons && size[g] === 1) ? 1 : 0;
    // Every code in [0, count) is some row's, so first[g] is a row index.
    (keep[g] ? keptGroupIds : droppedGroupIds).push(groupIds[first[g]!]!);
  }
  const keptRows: number[] = [];
  for (let r = 0; r < rows; r++) if (keep[codes[r]!]) keptRows.push(r);
  return { keptGroupIds, droppedGroupIds, keptRows };
}

export interface KeptGroup {
  /** 0-based generation round the group came from. */
  readonly round: number;
  readonly groupId: GroupId;
  /** Row indices within that round's batch. */
  readonly rows: number[];
}

export type DynamicSamplingStatus = 'need-more' | 'complete' | 'gave-up';

export interface DynamicSamplingResult {
  readonly status: DynamicSamplingStatus;
  readonly complete: boolean;
  /** True when the round budget ran out before `targetGroups` groups were collected. */
  readonly gaveUp: boolean;
  readonly rounds: number;
  /** Kept groups in collection order, at most `targetGroups` (surplus from the last round is trimmed). */
  readonly groups: KeptGroup[];
  /** Rows to keep per round, e.g. to slice each round's batch before concatenation. */
  readonly rowsByRound: number[][];
}

/**
 * Collects groups with reward variance across generation rounds until `targetGroups` are collected
 * (the DAPO trainer's `num_prompt_in_batch < train_batch_size` loop). `maxRounds` bounds the number of rounds
 * in total (veRL `max_num_gen_batches`; 0 means unbounded); when it is reached first, the status is `gave-up`.
 */
export class DynamicSamplingAccumulator {
  readonly targetGroups: number;
  readonly maxRounds: number;
  private readonly keepSingletonGroups: boolean;
  private readonly kept: KeptGroup[] = [];
  private roundCount = 0;

  constructor(options: { targetGroups: number; maxRounds?: number; keepSingletonGroups?: boolean }) {
    if (!Number.isInteger(options?.targetGroups) || options.targetGroups < 1) {
      throw new AlgorithmInputError('targetGroups', `must be a positive integer, got ${String(options?.targetGroups)}`);
    }
    const maxRounds = options.maxRounds ?? 0;
    if (!Number.isInteger(maxRounds) || maxRounds < 0) {
      throw new AlgorithmInputError('maxRounds', `must be a non-negative integer (0 = unbounded), got ${String(maxRounds)}`);
    }
    this.targetGroups = options.targetGroups;
    this.maxRounds = maxRounds;
    this.keepSingletonGroups = options.keepSingletonGroups ?? true;
  }

  get status(): DynamicSamplingStatus {
    if (this.kept.length >= this.targetGroups) return 'complete';
    if (this.maxRounds > 0 && this.roundCount >= this.maxRounds) return 'gave-up';
    return 'need-more';
  }

  /** Adds one generation round; returns the status afterwards ('need-more': generate another round). */
  addRound(episodeRewards: RowVector, groupIds: ArrayLike<GroupId>): DynamicSamplingStatus {
    if (this.status !== 'need-more') {
      throw new AlgorithmInputError('addRound', `the accumulator is already ${this.status}; read result() instead`);
    }
    const selection = selectGroupsWithVariance(episodeRewards, groupIds, { keepSingletonGroups: this.keepSingletonGroups });
    const rowsOf = new Map<GroupId, number[]>();
    for (const r of selection.keptRows) {
      const id = groupIds[r]!;
      const list = rowsOf.get(id);
      if (list === undefined) rowsOf.set(id, [r]);
      else list.push(r);
    }
    for (const id of selection.keptGroupIds) this.kept.push({ round: this.roundCount, groupId: id, rows: rowsOf.get(id) ?? [] });
    this.roundCount++;
    return this.status;
  }

  result(): DynamicSamplingResult {
    const status = this.status;
    const groups = this.kept.slice(0, this.targetGroups);
    const rowsByRound: number[][] = Array.from({ length: this.roundCount }, () => []);
    for (const g of groups) rowsByRound[g.round]!.push(...g.rows);
    for (const rows of rowsByRound) rows.sort((a, b) => a - b);
    return { status, complete: status === 'complete', gaveUp: status === 'gave-up', rounds: this.roundCount, groups, rowsByRound };
  }
}
