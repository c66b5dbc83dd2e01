import type { StepContext } from '../data/StepContext.js';
import type { TrainingBatch } from '../data/TrainingBatch.js';
import { createToken } from '../di/Token.js';
import type { BatchInput } from './BatchInputSource.js';

/**
 * Fills a batch's `advantages` and `returns` from its rewards; chosen by name with `algorithm.advantage`. `inputs`
 * are the columns it reads beyond rewards, masks and ids: `validate` rejects a config in which no plugin supplies
 * one of them (a `BatchInputSource` of that name).
 */
export interface AdvantageEstimator {
  readonly name: string;
  /** Absent: none. */
  readonly inputs?: readonly BatchInput[];
  estimate(batch: TrainingBatch, step: StepContext): void | Promise<void>;
}
export const AdvantageEstimator = createToken<AdvantageEstimator>('AdvantageEstimator', {
  label: 'advantage estimator',
  configKey: 'algorithm.advantage',
  named: true,
});
