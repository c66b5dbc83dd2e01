import type { Coding } from '../grouping/coding.js';
import type { GroupKey, GroupKeyName } from '../grouping/groupKeys.js';
import type { Matrix, RowVector } from '../matrix.js';

export type Id = string | number;

export interface AdvantageInput {
  /** `[rows][tokens]` token-level rewards; a row's score is the sum over all positions. */
  tokenRewards: Matrix;
  /** `[rows][tokens]`, 1 where the token is a trained (response) token. */
  responseMask: Matrix;
  /** Prompt group of each row (veRL `uid` / `index`); needed only by estimators that group rows (see `defaultGroupKey`). */
  groupIds?: ArrayLike<Id>;
  /** Rollout of each row (veRL `traj_uid`). */
  trajectoryIds?: ArrayLike<Id>;
  /** Agent of each row (one row = one agent turn). */
  agentIds?: ArrayLike<Id>;
  /** Turn of each row, for the `prompt_agent_turn` group key. */
  turnIds?: ArrayLike<Id>;
  /** Worker group (trained model) of each row, for the `prompt_worker_group` group key. */
  workerGroupIds?: ArrayLike<Id>;
  /** Critic values `[rows][tokens]`, for `gae`. */
  values?: Matrix;
  /** Per-row discounted step returns, for `gigpo`. */
  stepRewards?: RowVector;
  /** Per-row anchor observation, for `gigpo` step groups. */
  anchorObservations?: readonly string[];
  /** Per-row greedy-rollout reward, for `remax`. */
  baselineRewards?: RowVector;
}

export interface AdvantageOptions {
  /** Divide by the group std (GRPO); false gives Dr. GRPO. Default true. */
  normalizeByStd?: boolean;
  /** Added to the std. Default 1e-6. */
  epsilon?: number;
  /** Discount. Default 1. */
  gamma?: number;
  /** GAE lambda. Default 1. */
  lam?: number;
  /** GiGPO weight of the step advantage. Default 1. */
  stepAdvantageWeight?: number;
  /** RAE: decay alpha of each role's moving-average baseline, b <- alpha b + (1 - alpha) R, in [0, 1). Default 0.95 (SPIRAL). */
  raeDecay?: number;
  /** GiGPO normalization. Default `mean_norm`. */
  gigpoMode?: 'mean_norm' | 'mean_std_norm';
  /** GiGPO: cluster anchor observations by difflib similarity ratio >= this, in (0, 1]; exact match when unset. */
  similarityThreshold?: number;
  /** Which rows share a baseline (group-based estimators). Defaults to the estimator's own key. */
  groupKey?: GroupKey<AdvantageInput>;
  /** Also return `lossRowMask`: 0 for rows of groups whose scores are all equal (zero std), else 1. */
  excludeZeroStdGroups?: boolean;
  /**
   * The sample a group's mean and std are taken over, independent of the group key: every `turn` (row) its own
   * sample, or each `trajectory`'s rows in the group averaged into one. Defaults to the estimator's own unit
   * (`grpo`: trajectory, `drmas`: turn); only estimators with a `defaultStatisticsUnit` accept it.
   */
  statisticsUnit?: StatisticsUnit;
}

/** What one sample of a group's statistics is: a turn (row), or a trajectory's rows of the group averaged. */
export type StatisticsUnit = 'turn' | 'trajectory';
export const STATISTICS_UNITS: readonly StatisticsUnit[] = Object.freeze(['turn', 'trajectory']);

export interface AdvantageResult {
  advantages: number[][];
  returns: number[][];
  /** With `excludeZeroStdGroups`: per-row 0/1 mask dropping zero-variance groups from the loss. */
  lossRowMask?: number[];
}

export interface ResolvedAdvantageOptions {
  readonly normalizeByStd: boolean;
  readonly epsilon: number;
  readonly gamma: number;
  readonly lam: number;
  readonly stepAdvantageWeight: number;
  readonly raeDecay: number;
  readonly gigpoMode: 'mean_norm' | 'mean_std_norm';
  readonly similarityThreshold: number | undefined;
  /** The option as given; undefined leaves the estimator's `defaultStatisticsUnit`. */
  readonly statisticsUnit: StatisticsUnit | undefined;
}

/**
 * The columns an estimator reads and writes, laid out as `TrainingBatch`'s (a step's batch is one): per-token columns
 * `[batch rows * responseLength]`, per-row ones `[batch rows]`. `computeAdvantage` builds the same shape from
 * `number[][]` input.
 */
export interface AdvantageColumns {
  /** Tokens per row of the per-token columns. */
  readonly responseLength: number;
  readonly tokenRewards: ArrayLike<number>;
  /** 1 where a token is a trained response token. */
  readonly responseMask: ArrayLike<number>;
  /** Critic values at every token (`gae`). */
  readonly values?: ArrayLike<number>;
  /** Per row: the turn's reward (`gigpo`'s step rewards). */
  readonly rewards: ArrayLike<number>;
  /** Per row: a greedy rollout's reward (`remax`). */
  readonly baselineRewards?: ArrayLike<number>;
  /** Per row: the observation the turn acted on (`gigpo`'s anchor states). */
  readonly observations?: readonly string[];
  /** Written by the estimator at the rows it computes, every token of each. */
  readonly advantages: Float64Array;
  readonly returns: Float64Array;
}

/**
 * The rows one estimator computes: a view of the columns (row indices, in order) and the codings of those rows. Index
 * `i` of a coding is view position `i`, whose batch row is `rows[i]`: an estimator reads the columns at
 * `rows[i] * responseLength + t` and writes `advantages` and `returns` there.
 */
export interface EstimatorView {
  readonly columns: AdvantageColumns;
  readonly rows: Int32Array;
  /** Prompt groups (one group of every row when the estimator does not group and none were given). */
  readonly prompts: Coding;
  /** Baseline groups, after the group key (the prompt groups for estimators that do not group). */
  readonly groups: Coding;
  /** (group, trajectory) pairs, when trajectory ids were given. */
  readonly trajectories?: Coding;
  /** Round of each row (`turnIds`), when given. */
  readonly rounds?: Coding;
  /** @deprecated since 0.2.0: `rounds` */
  readonly steps?: Coding;
  /** Agent of each row, when given, with the role behind each code (`agentNames[agents.codes[i]]`). */
  readonly agents?: Coding;
  readonly agentNames?: readonly string[];
}

/** Inputs beyond rewards, mask and group ids that an estimator needs. */
export type RequiredInput = 'values' | 'stepRewards' | 'anchorObservations' | 'baselineRewards';

/**
 * An advantage estimator's formula over a view of the batch's columns, and what it reads. Plugins provide it to the
 * kernel by name (`AlgorithmsPlugin` provides the built-ins); `computeAdvantage` runs one on `number[][]` input.
 */
export interface EstimatorDefinition {
  readonly name: string;
  /** Which rows share a baseline when `options.groupKey` is not given; absent for estimators that do not group rows. */
  readonly defaultGroupKey?: GroupKeyName;
  /** Inputs beyond rewards, the mask and ids. */
  readonly requires: readonly RequiredInput[];
  /** The sample unit of the group statistics when `options.statisticsUnit` is not given; absent: the option does not apply. */
  readonly defaultStatisticsUnit?: StatisticsUnit;
  /** For estimators that carry state from step to step (RAE's moving averages): a fresh state, as at the start of a run. */
  createState?(): EstimatorState;
  /**
   * Writes `advantages` and `returns` at every token of the view's rows, in place. `state` is the one `createState`
   * made, carried by the caller (a fresh one when the caller gives none).
   */
  compute(view: EstimatorView, options: ResolvedAdvantageOptions, state?: EstimatorState): void;
}

/** An estimator's state across steps, as JSON for checkpoints (a resumed run continues from exactly this). */
export interface EstimatorState {
  getState(): unknown;
  setState(state: unknown): void;
}
