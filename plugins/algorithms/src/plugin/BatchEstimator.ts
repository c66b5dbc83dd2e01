import type { AdvantageEstimator, AdvantageScope, BatchInput, StepContext, TrainingBatch } from '@drmas/core';
import { computeAdvantageColumnar, type ColumnarAdvantageInput, type ColumnarAdvantageOptions } from '../computeAdvantage.js';
import type { EstimatorDefinition, EstimatorState, RequiredInput } from '../estimators/types.js';
import { zeroStdGroups } from '../sampling/zeroStdGroups.js';

/** The batch column behind each input a definition requires; step rewards are the turns' own rewards, always there. */
const BATCH_INPUT: Readonly<Record<RequiredInput, BatchInput | undefined>> = {
  values: 'values',
  baselineRewards: 'baselineRewards',
  anchorObservations: 'observations',
  stepRewards: undefined,
};

/** The estimator options for one agent role's rows: `algorithm.*`, with `agents.<role>.advantageOptions` over them. */
export type RoleOptions = (role: string | undefined) => ColumnarAdvantageOptions;

/** The estimator's inputs read from the batch columns, every row. */
function wholeBatchInput(batch: TrainingBatch): ColumnarAdvantageInput {
  const { ids } = batch;
  return {
    rowLength: batch.responseLength,
    tokenRewards: batch.tokenRewards,
    responseMask: batch.responseMask,
    values: batch.values,
    groupCodes: ids.group.codes,
    trajectoryCodes: ids.trajectory.codes,
    agentCodes: ids.agent.codes,
    agentNames: ids.agent.names,
    turnCodes: ids.step.codes,
    workerGroupCodes: ids.workerGroup.codes,
    anchorObservations: batch.observations,
    stepRewards: batch.rewards,
    baselineRewards: batch.baselineRewards,
  };
}

/** The same inputs at `rows` only, gathered into columns of their own. */
function rowsInput(batch: TrainingBatch, rows: Int32Array): ColumnarAdvantageInput {
  const R = batch.responseLength;
  const tokens = (column: ArrayLike<number>, out: Float64Array | Float32Array) => {
    rows.forEach((row, i) => {
      for (let t = 0; t < R; t++) out[i * R + t] = column[row * R + t]!;
    });
    return out;
  };
  const perRow = (column: ArrayLike<number>) => Float64Array.from(rows, (row) => column[row]!);
  const codes = (column: Int32Array) => Int32Array.from(rows, (row) => column[row]!);
  const whole = wholeBatchInput(batch);
  return {
    ...whole,
    tokenRewards: tokens(batch.tokenRewards, new Float64Array(rows.length * R)),
    responseMask: tokens(batch.responseMask, new Float32Array(rows.length * R)),
    values: batch.values && tokens(batch.values, new Float64Array(rows.length * R)),
    groupCodes: codes(batch.ids.group.codes),
    trajectoryCodes: codes(batch.ids.trajectory.codes),
    agentCodes: codes(batch.ids.agent.codes),
    turnCodes: codes(batch.ids.step.codes),
    workerGroupCodes: codes(batch.ids.workerGroup.codes),
    anchorObservations: batch.observations && Array.from(rows, (row) => batch.observations![row]!),
    stepRewards: perRow(batch.rewards),
    baselineRewards: batch.baselineRewards && perRow(batch.baselineRewards),
  };
}

/**
 * An estimator definition as the kernel runs it: it reads the step's `TrainingBatch` columns in place (token rewards,
 * the response mask, the id codes, and the inputs it declares) and writes `advantages` and `returns` back into them.
 * Given a scope (the rows of the roles that chose it), it computes on those rows alone; roles with different
 * `agents.<role>.advantageOptions` are computed apart. Rows of zero-variance groups, when configured to leave the
 * loss, are remembered and left out by `excludeZeroStdRows` once every estimator has run and the step's advantage
 * statistics are taken.
 */
export class BatchEstimator implements AdvantageEstimator {
  readonly inputs: readonly BatchInput[];
  /** What a stateful definition carries from step to step (checkpointed by the plugin); undefined for the others. */
  readonly state: EstimatorState | undefined;
  private readonly excluded = new WeakMap<TrainingBatch, number[]>();

  constructor(
    readonly definition: EstimatorDefinition,
    private readonly options: RoleOptions,
  ) {
    this.state = definition.createState?.();
    this.inputs = definition.requires.map((need) => BATCH_INPUT[need]).filter((input): input is BatchInput => input !== undefined);
  }

  get name(): string {
    return this.definition.name;
  }

  estimate(batch: TrainingBatch, _step?: StepContext, scope?: AdvantageScope): void {
    if (batch.rows === 0) return;
    const agents = scope?.agents ?? [...batch.ids.agent.names].sort();
    const byOptions = new Map<string, { options: ColumnarAdvantageOptions; agents: Set<string> }>();
    for (const role of agents) {
      const options = this.options(role);
      const key = JSON.stringify(options);
      const entry = byOptions.get(key) ?? { options, agents: new Set<string>() };
      entry.agents.add(role);
      byOptions.set(key, entry);
    }
    if (byOptions.size === 1 && scope === undefined) {
      this.computeRows(batch, undefined, [...byOptions.values()][0]!.options);
      return;
    }
    for (const { options, agents: roles } of byOptions.values()) {
      const candidates = scope?.rows ?? batch.all().rows;
      const rows = candidates.filter((row) => roles.has(batch.ids.agent.names[batch.ids.agent.codes[row]!]!));
      this.computeRows(batch, rows.length === batch.rows ? undefined : rows, options);
    }
  }

  /** Sets the response mask of the rows this estimator kept out of the loss (zero-variance groups) to 0. */
  excludeZeroStdRows(batch: TrainingBatch): void {
    const R = batch.responseLength;
    for (const row of this.excluded.get(batch) ?? []) batch.responseMask.fill(0, row * R, (row + 1) * R);
    this.excluded.delete(batch);
  }

  /** Computes `rows` (every row when undefined) and writes their advantages and returns into the batch. */
  private computeRows(batch: TrainingBatch, rows: Int32Array | undefined, options: ColumnarAdvantageOptions): void {
    if (rows?.length === 0) return;
    const R = batch.responseLength;
    const input = rows ? rowsInput(batch, rows) : wholeBatchInput(batch);
    const result = computeAdvantageColumnar(this.definition, input, options, this.state);
    const rowOf = (i: number) => (rows ? rows[i]! : i);
    if (rows) {
      rows.forEach((row, i) => {
        batch.advantages.set(result.advantages.subarray(i * R, (i + 1) * R), row * R);
        batch.returns.set(result.returns.subarray(i * R, (i + 1) * R), row * R);
      });
    } else {
      batch.advantages.set(result.advantages);
      batch.returns.set(result.returns);
    }
    const excluded = this.excluded.get(batch) ?? [];
    result.lossRowMask?.forEach((keep, i) => {
      if (keep === 0) excluded.push(rowOf(i));
    });
    if (excluded.length) this.excluded.set(batch, excluded);
  }
}

/** `advantage/frac_reward_zero_std` over the episodes, and the advantages' mean and std over the response tokens. */
export function reportAdvantages(batch: TrainingBatch, step: StepContext): void {
  const outcomes = batch.trajectories.map((t) => t.outcome ?? 0);
  step.metrics['advantage/frac_reward_zero_std'] = zeroStdGroups(
    outcomes,
    batch.trajectories.map((t) => t.groupId),
  ).fracRewardZeroStd;
  let sum = 0;
  let squares = 0;
  let count = 0;
  for (let i = 0; i < batch.responseMask.length; i++) {
    if (batch.responseMask[i] === 0) continue;
    sum += batch.advantages[i]!;
    squares += batch.advantages[i]! ** 2;
    count++;
  }
  const mean = count ? sum / count : 0;
  step.metrics['advantage/mean'] = mean;
  step.metrics['advantage/std'] = count ? Math.sqrt(Math.max(0, squares / count - mean * mean)) : 0;
}
