import type { AdvantageEstimator, BatchInput, StepContext, TrainingBatch } from '@drmas/core';
import { computeAdvantageColumnar, type ColumnarAdvantageOptions } from '../computeAdvantage.js';
import type { EstimatorDefinition, RequiredInput } from '../estimators/types.js';
import { zeroStdGroups } from '../sampling/zeroStdGroups.js';

/** The batch column behind each input a definition requires; step rewards are the turns' own rewards, always there. */
const BATCH_INPUT: Readonly<Record<RequiredInput, BatchInput | undefined>> = {
  values: 'values',
  baselineRewards: 'baselineRewards',
  anchorObservations: 'observations',
  stepRewards: undefined,
};

/**
 * An estimator definition as the kernel runs it: it reads the step's `TrainingBatch` columns in place (token rewards,
 * the response mask, the id codes, and the inputs it declares), writes `advantages` and `returns` back into them, and
 * keeps zero-variance groups out of the loss (their rows' mask set to 0) when configured.
 */
export class BatchEstimator implements AdvantageEstimator {
  readonly inputs: readonly BatchInput[];

  constructor(
    readonly definition: EstimatorDefinition,
    private readonly options: () => ColumnarAdvantageOptions,
  ) {
    this.inputs = definition.requires.map((need) => BATCH_INPUT[need]).filter((input): input is BatchInput => input !== undefined);
  }

  get name(): string {
    return this.definition.name;
  }

  estimate(batch: TrainingBatch, step?: StepContext): void {
    if (batch.rows === 0) return;
    const R = batch.responseLength;
    const { ids } = batch;
    const result = computeAdvantageColumnar(
      this.definition,
      {
        rowLength: R,
        tokenRewards: batch.tokenRewards,
        responseMask: batch.responseMask,
        values: batch.values,
        groupCodes: ids.group.codes,
        trajectoryCodes: ids.trajectory.codes,
        agentCodes: ids.agent.codes,
        turnCodes: ids.step.codes,
        workerGroupCodes: ids.workerGroup.codes,
        anchorObservations: batch.observations,
        stepRewards: batch.rewards,
        baselineRewards: batch.baselineRewards,
      },
      this.options(),
    );
    batch.advantages.set(result.advantages);
    batch.returns.set(result.returns);
    if (step) this.report(batch, step);
    result.lossRowMask?.forEach((keep, row) => {
      if (keep === 0) batch.responseMask.fill(0, row * R, (row + 1) * R);
    });
  }

  /** `advantage/frac_reward_zero_std` over the episodes, and the advantages' mean and std over the response tokens. */
  private report(batch: TrainingBatch, step: StepContext): void {
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
}
