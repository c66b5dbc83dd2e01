import { AlgorithmInputError } from './errors.js';
import { resolveAdvantageOptions } from './estimators/advantageOptions.js';
import type {
  AdvantageInput,
  AdvantageOptions,
  AdvantageResult,
  EstimatorBatch,
  EstimatorDefinition,
  EstimatorOutput,
  EstimatorState,
} from './estimators/types.js';
import { encodeIds, integerCoding, combineCodings, type Coding } from './grouping/coding.js';
import { resolveBuiltInGroupKey, type GroupKeyName, type IdColumn } from './grouping/groupKeys.js';
import { rowSums } from './kernels/rowScores.js';
import { flattenMatrix, toRowVector, unflatten, type FloatBuffer, type RowVector } from './matrix.js';
import { summarizeZeroStdGroups } from './sampling/zeroStdGroups.js';

/** Input of the columnar fast path: flat row-major buffers and integer-coded ids. */
export interface ColumnarAdvantageInput {
  /** Tokens per row; every flat buffer holds rows * rowLength entries. */
  rowLength: number;
  tokenRewards: FloatBuffer;
  responseMask: FloatBuffer | Uint8Array;
  /** Prompt group of each row as a non-negative integer; needed only by estimators that group rows. */
  groupCodes?: ArrayLike<number>;
  trajectoryCodes?: ArrayLike<number>;
  agentCodes?: ArrayLike<number>;
  /** The role behind each agent code (`agentNames[agentCodes[row]]`), for estimators that keep state per role. */
  agentNames?: readonly string[];
  turnCodes?: ArrayLike<number>;
  workerGroupCodes?: ArrayLike<number>;
  values?: FloatBuffer;
  stepRewards?: RowVector;
  anchorObservations?: readonly string[];
  baselineRewards?: RowVector;
}

export interface ColumnarAdvantageOptions extends Omit<AdvantageOptions, 'groupKey'> {
  /** A built-in group key name; custom keys are given as precomputed `groupKeyCodes`. */
  groupKey?: GroupKeyName;
  /** Per-row integer codes of the baseline groups, overriding `groupKey`. */
  groupKeyCodes?: ArrayLike<number>;
}

export interface ColumnarAdvantageResult {
  advantages: Float64Array;
  returns: Float64Array;
  rows: number;
  rowLength: number;
  lossRowMask?: number[];
}

const COLUMNAR_KEY: Record<IdColumn, keyof ColumnarAdvantageInput> = {
  groupIds: 'groupCodes',
  agentIds: 'agentCodes',
  turnIds: 'turnCodes',
  workerGroupIds: 'workerGroupCodes',
};

function checkRequired(estimator: EstimatorDefinition, present: Record<string, unknown>, hint: Record<string, string>): void {
  for (const need of estimator.requires) {
    if (present[need] === undefined) {
      throw new AlgorithmInputError(need, `is required by estimator '${estimator.name}'${hint[need] ? ` (${hint[need]})` : ''}`);
    }
  }
}

const REQUIRED_HINTS: Record<string, string> = {
  values: 'critic values [rows][tokens]',
  stepRewards: 'per-row discounted step returns',
  anchorObservations: 'per-row anchor observation',
  baselineRewards: 'per-row greedy-rollout reward',
};

function checkRowVector(v: ArrayLike<unknown> | undefined, key: string, rows: number): void {
  if (v !== undefined && v.length !== rows) throw new AlgorithmInputError(key, `has ${v.length} entries, expected ${rows} (one per row)`);
}

/** Every row in one group: the coding estimators that do not group see when no group ids were given. */
function singleGroup(rows: number): Coding {
  return { codes: new Int32Array(rows), count: rows > 0 ? 1 : 0 };
}

/** Group ids are required when the estimator groups rows (by its own key or one given in the options). */
function groupsNeeded(
  estimator: EstimatorDefinition,
  options: { groupKey?: unknown; groupKeyCodes?: unknown; excludeZeroStdGroups?: boolean } | undefined,
): boolean {
  return estimator.defaultGroupKey !== undefined || options?.groupKey !== undefined || options?.excludeZeroStdGroups === true;
}

function run(
  estimator: EstimatorDefinition,
  batch: EstimatorBatch,
  options: AdvantageOptions | ColumnarAdvantageOptions | undefined,
  state: EstimatorState | undefined,
): { out: EstimatorOutput; lossRowMask?: number[] } {
  const given = resolveAdvantageOptions(options);
  const resolved = { ...given, statisticsUnit: given.statisticsUnit ?? estimator.defaultStatisticsUnit };
  if (given.statisticsUnit !== undefined) {
    if (estimator.defaultStatisticsUnit === undefined) {
      throw new AlgorithmInputError(
        'options.statisticsUnit',
        `does not apply to estimator '${estimator.name}', which takes no mean and std over samples of a group`,
      );
    }
    if (given.statisticsUnit === 'trajectory' && batch.trajectories === undefined) {
      throw new AlgorithmInputError('trajectoryIds', "is required by statisticsUnit 'trajectory' (each trajectory's rows are averaged)");
    }
  }
  const out = estimator.compute(batch, resolved, state ?? estimator.createState?.());
  if (!options?.excludeZeroStdGroups) return { out };
  const scores = rowSums(batch.tokenRewards, batch.rows, batch.cols);
  return { out, lossRowMask: summarizeZeroStdGroups(scores, batch.groups).rowMask };
}

/**
 * Advantages and returns of a batch, `[rows][tokens]`, with `estimator` (one of `ADVANTAGE_ESTIMATORS`, or your
 * own definition). Computed in float64 by the same kernels as {@link computeAdvantageColumnar}. A stateful
 * estimator (`rae`) continues from `state` (made by its `createState`), and updates it; without one it starts fresh.
 */
export function computeAdvantage(
  estimator: EstimatorDefinition,
  input: AdvantageInput,
  options?: AdvantageOptions,
  state?: EstimatorState,
): AdvantageResult {
  if (input === null || typeof input !== 'object') throw new AlgorithmInputError('input', 'must be an object');
  checkRequired(estimator, input as unknown as Record<string, unknown>, REQUIRED_HINTS);
  const rewards = flattenMatrix(input.tokenRewards, 'tokenRewards', undefined, undefined, true);
  const { rows, cols } = rewards;
  const mask = flattenMatrix(input.responseMask, 'responseMask', rows, cols, true);
  const values = input.values === undefined ? undefined : flattenMatrix(input.values, 'values', rows, cols, true).data;
  if (input.groupIds === undefined && groupsNeeded(estimator, options)) {
    throw new AlgorithmInputError('groupIds', `is required by estimator '${estimator.name}' (it normalizes within groups of rows)`);
  }
  const prompts = input.groupIds === undefined ? singleGroup(rows) : encodeIds(input.groupIds, 'groupIds', rows);
  const columns: Partial<Record<IdColumn, Coding>> = { groupIds: prompts };
  const column = (c: IdColumn): Coding | undefined => {
    if (columns[c] === undefined && input[c] !== undefined) columns[c] = encodeIds(input[c], c, rows);
    return columns[c];
  };
  const key = options?.groupKey ?? estimator.defaultGroupKey;
  let groups: Coding;
  if (key === undefined) {
    groups = prompts;
  } else if (typeof key === 'function') {
    const keys = new Array<string | number>(rows);
    for (let r = 0; r < rows; r++) keys[r] = key(r, input);
    groups = encodeIds(keys, 'options.groupKey', rows);
  } else {
    groups = resolveBuiltInGroupKey(key, column, (c) => c);
  }
  const trajectories =
    input.trajectoryIds === undefined ? undefined : combineCodings(prompts, encodeIds(input.trajectoryIds, 'trajectoryIds', rows));
  if (input.anchorObservations !== undefined) {
    checkRowVector(input.anchorObservations, 'anchorObservations', rows);
    input.anchorObservations.forEach((o, i) => {
      if (typeof o !== 'string') throw new AlgorithmInputError('anchorObservations', `entry ${i} is ${typeof o}; expected a string`);
    });
  }
  const batch: EstimatorBatch = {
    rows,
    cols,
    tokenRewards: rewards.data,
    responseMask: mask.data,
    values,
    prompts,
    groups,
    trajectories,
    steps: column('turnIds'),
    agents: column('agentIds'),
    agentNames: input.agentIds === undefined ? undefined : namesInOrder(input.agentIds),
    stepRewards: input.stepRewards === undefined ? undefined : toRowVector(input.stepRewards, 'stepRewards', rows),
    anchorObservations: input.anchorObservations,
    baselineRewards: input.baselineRewards === undefined ? undefined : toRowVector(input.baselineRewards, 'baselineRewards', rows),
  };
  const { out, lossRowMask } = run(estimator, batch, options, state);
  const result: AdvantageResult = { advantages: unflatten(out.advantages, rows, cols), returns: unflatten(out.returns, rows, cols) };
  if (lossRowMask !== undefined) result.lossRowMask = lossRowMask;
  return result;
}

/** Ids as text, by order of first appearance: the names behind `encodeIds`' codes. */
function namesInOrder(ids: ArrayLike<string | number>): string[] {
  return [...new Set(Array.from(ids, String))];
}

function checkFlat(buffer: ArrayLike<number> | undefined, key: string, size: number): void {
  if (buffer === undefined) return;
  if (typeof (buffer as { length?: unknown }).length !== 'number') throw new AlgorithmInputError(key, 'expected a flat typed array');
  if (buffer.length !== size) throw new AlgorithmInputError(key, `has ${buffer.length} entries, expected rows * rowLength = ${size}`);
}

/**
 * The columnar fast path: flat `Float32Array`/`Float64Array` buffers with a row length and integer-coded ids.
 * Returns flat float64 buffers; `returns` is a separate buffer even where it equals `advantages`.
 */
export function computeAdvantageColumnar(
  estimator: EstimatorDefinition,
  input: ColumnarAdvantageInput,
  options?: ColumnarAdvantageOptions,
  state?: EstimatorState,
): ColumnarAdvantageResult {
  if (input === null || typeof input !== 'object') throw new AlgorithmInputError('input', 'must be an object');
  checkRequired(estimator, input as unknown as Record<string, unknown>, REQUIRED_HINTS);
  const cols = input.rowLength;
  if (!Number.isInteger(cols) || cols < 0)
    throw new AlgorithmInputError('rowLength', `must be a non-negative integer, got ${String(cols)}`);
  if (input.groupCodes === undefined && groupsNeeded(estimator, options)) {
    throw new AlgorithmInputError('groupCodes', `is required by estimator '${estimator.name}' (it normalizes within groups of rows)`);
  }
  const rows = input.groupCodes?.length ?? (cols > 0 ? Math.floor(input.tokenRewards.length / cols) : 0);
  checkFlat(input.tokenRewards, 'tokenRewards', rows * cols);
  checkFlat(input.responseMask, 'responseMask', rows * cols);
  checkFlat(input.values, 'values', rows * cols);
  const prompts = input.groupCodes === undefined ? singleGroup(rows) : integerCoding(input.groupCodes, 'groupCodes', rows);
  const columns: Partial<Record<IdColumn, Coding>> = { groupIds: prompts };
  const column = (c: IdColumn): Coding | undefined => {
    const codes = input[COLUMNAR_KEY[c]] as ArrayLike<number> | undefined;
    if (columns[c] === undefined && codes !== undefined) columns[c] = integerCoding(codes, COLUMNAR_KEY[c], rows);
    return columns[c];
  };
  const key = options?.groupKey ?? estimator.defaultGroupKey;
  let groups: Coding;
  if (options?.groupKeyCodes !== undefined) groups = integerCoding(options.groupKeyCodes, 'options.groupKeyCodes', rows);
  else if (key === undefined) groups = prompts;
  else groups = resolveBuiltInGroupKey(key, column, (c) => COLUMNAR_KEY[c]);
  const trajectories =
    input.trajectoryCodes === undefined
      ? undefined
      : combineCodings(prompts, integerCoding(input.trajectoryCodes, 'trajectoryCodes', rows));
  checkRowVector(input.stepRewards, 'stepRewards', rows);
  checkRowVector(input.baselineRewards, 'baselineRewards', rows);
  checkRowVector(input.anchorObservations, 'anchorObservations', rows);
  const batch: EstimatorBatch = {
    rows,
    cols,
    tokenRewards: input.tokenRewards,
    responseMask: input.responseMask,
    values: input.values,
    prompts,
    groups,
    trajectories,
    steps: column('turnIds'),
    agents: column('agentIds'),
    agentNames: input.agentNames,
    stepRewards: input.stepRewards,
    anchorObservations: input.anchorObservations,
    baselineRewards: input.baselineRewards,
  };
  const { groupKeyCodes: _codes, ...rest } = options ?? {};
  const { out, lossRowMask } = run(estimator, batch, rest, state);
  const returns = out.returns === out.advantages ? out.advantages.slice() : out.returns;
  const result: ColumnarAdvantageResult = { advantages: out.advantages, returns, rows, rowLength: cols };
  if (lossRowMask !== undefined) result.lossRowMask = lossRowMask;
  return result;
}
