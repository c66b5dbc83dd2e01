import type { BatchView, IdName } from '@drmas/core';
import { AlgorithmInputError } from './errors.js';
import { resolveAdvantageOptions } from './estimators/advantageOptions.js';
import { ADVANTAGE_ESTIMATORS } from './estimators/builtinEstimators.js';
import type {
  AdvantageColumns,
  AdvantageInput,
  AdvantageOptions,
  AdvantageResult,
  EstimatorDefinition,
  EstimatorState,
  EstimatorView,
  RequiredInput,
} from './estimators/types.js';
import { combineCodings, encodeIds, type Coding } from './grouping/coding.js';
import { resolveBuiltInGroupKey, type GroupKeyName, type IdColumn } from './grouping/groupKeys.js';
import { rowScores } from './kernels/rowScores.js';
import { flattenMatrix, toRowVector, unflatten } from './matrix.js';
import { unknownNameError } from './nameSuggestion.js';
import { summarizeZeroStdGroups } from './sampling/zeroStdGroups.js';

/** The options of an estimator run on a batch view: a built-in group key by name (a function key needs `computeAdvantage`'s ids). */
export interface BatchAdvantageOptions extends Omit<AdvantageOptions, 'groupKey'> {
  groupKey?: GroupKeyName;
}

const REQUIRED_HINTS: Record<RequiredInput, string> = {
  values: 'critic values [rows][tokens]',
  stepRewards: 'per-row discounted step returns',
  anchorObservations: 'per-row anchor observation',
  baselineRewards: 'per-row greedy-rollout reward',
};

function checkRequired(estimator: EstimatorDefinition, present: (input: RequiredInput) => boolean): void {
  for (const need of estimator.requires) {
    if (!present(need)) throw new AlgorithmInputError(need, `is required by estimator '${estimator.name}' (${REQUIRED_HINTS[need]})`);
  }
}

/** Every row in one group: the coding estimators that do not group see when no group ids were given. */
function singleGroup(rows: number): Coding {
  return { codes: new Int32Array(rows), count: rows > 0 ? 1 : 0 };
}

/** Group ids are required when the estimator groups rows (by its own key or one given in the options). */
function groupsNeeded(
  estimator: EstimatorDefinition,
  options: { groupKey?: unknown; excludeZeroStdGroups?: boolean } | undefined,
): boolean {
  return estimator.defaultGroupKey !== undefined || options?.groupKey !== undefined || options?.excludeZeroStdGroups === true;
}

/**
 * Runs `estimator` on `view` (writing its rows' advantages and returns) and returns, with `excludeZeroStdGroups`, the
 * view positions of zero-variance groups: groups whose scores are all equal, which leave the loss.
 */
function run(
  estimator: EstimatorDefinition,
  view: EstimatorView,
  options: AdvantageOptions | BatchAdvantageOptions | undefined,
  state: EstimatorState | undefined,
): number[] {
  const given = resolveAdvantageOptions(options);
  const resolved = { ...given, statisticsUnit: given.statisticsUnit ?? estimator.defaultStatisticsUnit };
  if (given.statisticsUnit !== undefined) {
    if (estimator.defaultStatisticsUnit === undefined) {
      throw new AlgorithmInputError(
        'options.statisticsUnit',
        `does not apply to estimator '${estimator.name}', which takes no mean and std over samples of a group`,
      );
    }
    if (given.statisticsUnit === 'trajectory' && view.trajectories === undefined) {
      throw new AlgorithmInputError('trajectoryIds', "is required by statisticsUnit 'trajectory' (each trajectory's rows are averaged)");
    }
  }
  estimator.compute(view, resolved, state ?? estimator.createState?.());
  if (!options?.excludeZeroStdGroups) return [];
  const { rowMask } = summarizeZeroStdGroups(rowScores(view), view.groups);
  return rowMask.flatMap((keep, i) => (keep === 0 ? [i] : []));
}

/** The estimator a name stands for among `ADVANTAGE_ESTIMATORS`, or a definition as given. */
function estimatorOf(estimator: string | EstimatorDefinition): EstimatorDefinition {
  if (typeof estimator === 'string') {
    if (!Object.prototype.hasOwnProperty.call(ADVANTAGE_ESTIMATORS, estimator)) {
      throw unknownNameError('estimator', 'advantage estimator', estimator, Object.keys(ADVANTAGE_ESTIMATORS));
    }
    return ADVANTAGE_ESTIMATORS[estimator as keyof typeof ADVANTAGE_ESTIMATORS];
  }
  if (
    estimator === null ||
    typeof estimator !== 'object' ||
    typeof estimator.compute !== 'function' ||
    !Array.isArray(estimator.requires)
  ) {
    throw new AlgorithmInputError(
      'estimator',
      `expected an estimator name (${Object.keys(ADVANTAGE_ESTIMATORS).join(', ')}) or an EstimatorDefinition, got ${estimator === null ? 'null' : typeof estimator}`,
    );
  }
  return estimator;
}

/** Ids as text, by order of first appearance: the names behind `encodeIds`' codes. */
function namesInOrder(ids: ArrayLike<string | number>): string[] {
  return [...new Set(Array.from(ids, String))];
}

/**
 * Advantages and returns of `[rows][tokens]` input, with `estimator`: a name of `ADVANTAGE_ESTIMATORS` (an unknown one
 * lists them, with "Did you mean") or your own definition. Computed in float64 by the kernels the training step runs.
 * A stateful estimator (`rae`) continues from `state` (made by its `createState`), and updates it; without one it
 * starts fresh. Throws `AlgorithmInputError` naming the input or option at fault.
 */
export function computeAdvantage(
  estimator: string | EstimatorDefinition,
  input: AdvantageInput,
  options?: AdvantageOptions,
  state?: EstimatorState,
): AdvantageResult {
  const definition = estimatorOf(estimator);
  if (input === null || typeof input !== 'object') throw new AlgorithmInputError('input', 'must be an object');
  checkRequired(definition, (need) => input[need] !== undefined);
  const rewards = flattenMatrix(input.tokenRewards, 'tokenRewards', undefined, undefined, true);
  const { rows, cols } = rewards;
  const mask = flattenMatrix(input.responseMask, 'responseMask', rows, cols, true);
  if (input.groupIds === undefined && groupsNeeded(definition, options)) {
    throw new AlgorithmInputError('groupIds', `is required by estimator '${definition.name}' (it normalizes within groups of rows)`);
  }
  if (input.anchorObservations !== undefined) {
    if (input.anchorObservations.length !== rows) {
      throw new AlgorithmInputError('anchorObservations', `has ${input.anchorObservations.length} entries, expected ${rows} (one per row)`);
    }
    input.anchorObservations.forEach((o, i) => {
      if (typeof o !== 'string') throw new AlgorithmInputError('anchorObservations', `entry ${i} is ${typeof o}; expected a string`);
    });
  }
  const columns: AdvantageColumns = {
    responseLength: cols,
    tokenRewards: rewards.data,
    responseMask: mask.data,
    values: input.values === undefined ? undefined : flattenMatrix(input.values, 'values', rows, cols, true).data,
    rewards: input.stepRewards === undefined ? new Float64Array(rows) : toRowVector(input.stepRewards, 'stepRewards', rows),
    baselineRewards: input.baselineRewards === undefined ? undefined : toRowVector(input.baselineRewards, 'baselineRewards', rows),
    observations: input.anchorObservations,
    advantages: new Float64Array(rows * cols),
    returns: new Float64Array(rows * cols),
  };
  const prompts = input.groupIds === undefined ? singleGroup(rows) : encodeIds(input.groupIds, 'groupIds', rows);
  const codings: Partial<Record<IdColumn, Coding>> = { groupIds: prompts };
  const column = (c: IdColumn): Coding | undefined => {
    if (codings[c] === undefined && input[c] !== undefined) codings[c] = encodeIds(input[c], c, rows);
    return codings[c];
  };
  const key = options?.groupKey ?? definition.defaultGroupKey;
  let groups: Coding;
  if (key === undefined) groups = prompts;
  else if (typeof key === 'function') {
    groups = encodeIds(
      Array.from({ length: rows }, (_, r) => key(r, input)),
      'options.groupKey',
      rows,
    );
  } else groups = resolveBuiltInGroupKey(key, column, (c) => c);
  const trajectories =
    input.trajectoryIds === undefined ? undefined : combineCodings(prompts, encodeIds(input.trajectoryIds, 'trajectoryIds', rows));
  const rounds = column('turnIds');
  const view: EstimatorView = {
    columns,
    rows: Int32Array.from({ length: rows }, (_, r) => r),
    prompts,
    groups,
    trajectories,
    rounds,
    steps: rounds,
    agents: column('agentIds'),
    agentNames: input.agentIds === undefined ? undefined : namesInOrder(input.agentIds),
  };
  const excluded = run(definition, view, options, state);
  const result: AdvantageResult = {
    advantages: unflatten(columns.advantages, rows, cols),
    returns: unflatten(columns.returns, rows, cols),
  };
  if (options?.excludeZeroStdGroups) {
    const lossRowMask = new Array<number>(rows).fill(1);
    for (const i of excluded) lossRowMask[i] = 0;
    result.lossRowMask = lossRowMask;
  }
  return result;
}

/** The batch column behind each input a definition requires: step rewards are the turns' own rewards, always there. */
const BATCH_COLUMN: Readonly<Record<RequiredInput, keyof AdvantageColumns>> = {
  values: 'values',
  baselineRewards: 'baselineRewards',
  anchorObservations: 'observations',
  stepRewards: 'rewards',
};

/** The batch's id column behind each group-key column. */
const BATCH_IDS: Readonly<Record<IdColumn, IdName>> = {
  groupIds: 'group',
  agentIds: 'agent',
  turnIds: 'round',
  workerGroupIds: 'workerGroup',
};

/**
 * Runs `estimator` on a view of a step's batch: it reads the batch's columns at the view's rows in place and writes
 * their `advantages` and `returns` there; only the view's id codes are gathered, to make its groups. Returns the
 * batch rows of zero-variance groups when `options.excludeZeroStdGroups` (else none).
 */
export function estimateView(
  estimator: EstimatorDefinition,
  { batch, rows }: BatchView,
  options?: BatchAdvantageOptions,
  state?: EstimatorState,
): number[] {
  checkRequired(estimator, (need) => batch[BATCH_COLUMN[need]] !== undefined);
  const ids = (name: IdName): Coding => {
    const { codes, names } = batch.ids[name];
    return { codes: Int32Array.from(rows, (row) => codes[row]!), count: names.length };
  };
  const prompts = ids('group');
  const rounds = ids('round');
  const key = options?.groupKey ?? estimator.defaultGroupKey;
  const view: EstimatorView = {
    columns: batch,
    rows,
    prompts,
    groups:
      key === undefined
        ? prompts
        : resolveBuiltInGroupKey(
            key,
            (c) => (c === 'groupIds' ? prompts : ids(BATCH_IDS[c])),
            (c) => c,
          ),
    trajectories: combineCodings(prompts, ids('trajectory')),
    rounds,
    steps: rounds,
    agents: ids('agent'),
    agentNames: batch.ids.agent.names,
  };
  return run(estimator, view, options, state).map((i) => rows[i]!);
}
