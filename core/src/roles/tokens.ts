import type { PolicyBackend } from '../compute/PolicyBackend.js';
import type { TrainingBatch } from '../data/TrainingBatch.js';
import type { BatchInput } from './BatchInputSource.js';
import type { Metrics, RunContext, StepContext, StepResult } from '../data/StepContext.js';
import { createToken } from '../di/Token.js';

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
  label: 'advantage estimator', configKey: 'algorithm.advantage', named: true,
});

/** Creates policy backends (one per worker group); chosen by name with `models.<id>.backend`. */
export interface BackendFactory {
  readonly name: string;
  /** Human-readable description of the runtime this factory would use, for `drmas info`. */
  describe?(): string;
  /** Rank among the engines `models.<id>.rollout: auto` may pick, higher first; absent: never picked by `auto`. */
  readonly priority?: number;
  /**
   * Why this factory cannot create a backend here (a package not installed, a library that does not load), or
   * undefined when it can. Initialises what it checks on the first call only and answers every call alike.
   */
  probe?(): Promise<string | undefined>;
  create(options: { modelId: string; settings: Record<string, unknown>; run: RunContext }): Promise<PolicyBackend>;
}
export const BackendFactory = createToken<BackendFactory>('BackendFactory', {
  label: 'backend', configKey: 'models.<id>.backend', named: true,
});

/** Receives each step's metrics (files, terminal, trackers); every bound sink gets every record. */
export interface MetricsSink {
  write(record: { step: number; metrics: Metrics }): void | Promise<void>;
  close?(): void | Promise<void>;
}
export const MetricsSink = createToken<MetricsSink>('MetricsSink', { label: 'metrics sink' });

export type { StepResult };
