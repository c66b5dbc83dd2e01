import type { PolicyBackend } from '../compute/PolicyBackend.js';
import type { RolloutBatch } from '../data/Turn.js';
import type { Metrics, RunContext, StepContext, StepResult } from '../data/StepContext.js';
import { createToken } from '../di/Token.js';

/** Computes per-token advantages of a rollout batch; chosen by name with `algorithm.advantage`. */
export interface AdvantageEstimator {
  readonly name: string;
  estimate(batch: RolloutBatch, step: StepContext): RolloutBatch | Promise<RolloutBatch>;
}
export const AdvantageEstimator = createToken<AdvantageEstimator>('AdvantageEstimator', {
  label: 'advantage estimator', configKey: 'algorithm.advantage', named: true,
});

/** Creates policy backends (one per worker group); chosen by name with `models.<id>.backend`. */
export interface BackendFactory {
  readonly name: string;
  /** Human-readable description of the runtime this factory would use, for `drmas info`. */
  describe?(): string;
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
