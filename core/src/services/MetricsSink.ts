import type { Metrics } from '../data/StepContext.js';
import { createToken } from '../di/Token.js';

/** Receives each step's metrics (files, terminal, trackers); every bound sink gets every record. */
export interface MetricsSink {
  write(record: { step: number; metrics: Metrics }): void | Promise<void>;
  close?(): void | Promise<void>;
}
export const MetricsSink = createToken<MetricsSink>('MetricsSink', { label: 'metrics sink' });
