import type { ExecutorRunStats } from './GraphExecutor.js';

/**
 * A step's executor figures: per model, generate calls, mean rows per call against `maxBatchSize` (batch fill) and
 * queue waits, generate calls that failed for several rows (then re-run row by row); and the episodes that failed, by
 * reason.
 */
export function executorMetrics(stats: ExecutorRunStats, maxBatchSize: number): Record<string, number> {
  const metrics: Record<string, number> = {};
  for (const [model, queue] of Object.entries(stats.models)) {
    const prefix = `rollout/executor/${model}`;
    metrics[`${prefix}/generate_calls`] = queue.batches;
    metrics[`${prefix}/batch_fill`] = queue.batches > 0 ? queue.rows / (queue.batches * maxBatchSize) : 0;
    metrics[`${prefix}/queue_wait_ms_mean`] = queue.waits.length > 0 ? queue.waits.reduce((a, b) => a + b, 0) / queue.waits.length : 0;
    metrics[`${prefix}/queue_wait_ms_max`] = queue.waits.reduce((a, b) => Math.max(a, b), 0);
    if (queue.failedBatches > 0) metrics[`${prefix}/failed_batches`] = queue.failedBatches;
  }
  for (const [reason, count] of Object.entries(stats.failed)) metrics[`rollout/failed_episodes/${reason}`] = count;
  return metrics;
}
