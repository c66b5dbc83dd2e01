import type { StepContext } from '../data/StepContext.js';
import type { TrainingBatch } from '../data/TrainingBatch.js';
import type { ResolvedConfig } from '../config/ResolvedConfig.js';
import { createToken } from '../di/Token.js';
import type { Contributions } from './Contributions.js';
import type { BatchInput } from './BatchInputSource.js';

/**
 * The rows one estimator computes when `agents.<role>.advantage` gives some roles an estimator of their own: the rows
 * of `agents`, which chose it (or, for `algorithm.advantage`, chose none).
 */
export interface AdvantageScope {
  /** Row indices into the batch, ascending. */
  readonly rows: Int32Array;
  /** The agent roles of those rows, sorted. */
  readonly agents: readonly string[];
}

/**
 * Fills a batch's `advantages` and `returns` from its rewards; chosen by name with `algorithm.advantage` (and per
 * role with `agents.<role>.advantage`). `inputs` are the columns it reads beyond rewards, masks and ids: `validate`
 * rejects a config in which no plugin supplies one of them (a `BatchInputSource` of that name).
 */
export interface AdvantageEstimator {
  readonly name: string;
  /** Absent: none. */
  readonly inputs?: readonly BatchInput[];
  /** Fills the rows of `scope` only (their statistics taken over them alone); without a scope, every row. */
  estimate(batch: TrainingBatch, step: StepContext, scope?: AdvantageScope): void | Promise<void>;
}
export const AdvantageEstimator = createToken<AdvantageEstimator>('AdvantageEstimator', {
  label: 'advantage estimator',
  configKey: 'algorithm.advantage',
  named: true,
});

/** The roles whose estimator (`agents.<role>.advantage`, else `algorithm.advantage`) reads critic values. */
export function rolesReadingValues(contributions: Pick<Contributions, 'getNamed'>, config: ResolvedConfig): Set<string> {
  const out = new Set<string>();
  for (const [role, entry] of Object.entries(config.agents)) {
    const name = entry.advantage ?? config.algorithm.advantage;
    if (name === undefined) continue;
    const key = entry.advantage ? `agents.${role}.advantage` : 'algorithm.advantage';
    if (contributions.getNamed(AdvantageEstimator, name, key).inputs?.includes('values')) out.add(role);
  }
  return out;
}
