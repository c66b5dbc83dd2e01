import type { AdvantageEstimator, AdvantageScope, BatchInput, StepContext, TrainingBatch } from '@drmas/core';
import { estimateView, type BatchAdvantageOptions } from '../computeAdvantage.js';
import type { EstimatorDefinition, EstimatorState, RequiredInput } from '../estimators/types.js';
import { zeroStdGroups } from '../sampling/zeroStdGroups.js';

/** The kernel input behind each input a definition requires; step rewards are the turns' own rewards, always there. */
const BATCH_INPUT: Readonly<Record<RequiredInput, BatchInput | undefined>> = {
  values: 'values',
  baselineRewards: 'baselineRewards',
  anchorObservations: 'observations',
  stepRewards: undefined,
};

/** The estimator options for one agent role's rows: `algorithm.*`, with `agents.<role>.advantageOptions` over them. */
export type RoleOptions = (role: string | undefined) => BatchAdvantageOptions;

/**
 * An estimator definition as the kernel runs it: it reads the step's `TrainingBatch` columns in place, at the rows it
 * computes (token rewards, the response mask, the id codes, and the inputs it declares), and writes `advantages` and
 * `returns` there. Given a scope (the rows of the roles that chose it), it computes on those rows alone; roles with
 * different `agents.<role>.advantageOptions` are computed apart. Where it decides that rows leave the loss
 * (zero-variance groups, with `excludeZeroStdGroups`), it marks them in the batch's `excludedRows` column.
 */
export class BatchEstimator implements AdvantageEstimator {
  readonly inputs: readonly BatchInput[];
  /** What a stateful definition carries from step to step (checkpointed by the plugin); undefined for the others. */
  readonly state: EstimatorState | undefined;

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
    const byOptions = new Map<string, { options: BatchAdvantageOptions; agents: Set<string> }>();
    for (const role of agents) {
      const options = this.options(role);
      const key = JSON.stringify(options);
      const entry = byOptions.get(key) ?? { options, agents: new Set<string>() };
      entry.agents.add(role);
      byOptions.set(key, entry);
    }
    const candidates = scope?.rows ?? batch.all().rows;
    for (const { options, agents: roles } of byOptions.values()) {
      const rows =
        byOptions.size === 1 ? candidates : candidates.filter((row) => roles.has(batch.ids.agent.names[batch.ids.agent.codes[row]!]!));
      if (rows.length === 0) continue;
      for (const row of estimateView(this.definition, batch.view(rows), options, this.state)) {
        (batch.excludedRows ??= new Uint8Array(batch.rows))[row] = 1;
      }
    }
  }
}

/**
 * `advantage/frac_reward_zero_std` over the episodes, and the advantages' mean and std over the response tokens (rows
 * kept out of the loss included).
 */
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
