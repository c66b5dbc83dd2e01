import type { Metrics, TrainingBatch } from '@drmas/core';

function meanStd(values: ArrayLike<number>): { mean: number; std: number } {
  const n = values.length;
  if (n === 0) return { mean: 0, std: 0 };
  let sum = 0;
  for (let i = 0; i < n; i++) sum += values[i]!;
  const mean = sum / n;
  let squares = 0;
  for (let i = 0; i < n; i++) squares += (values[i]! - mean) ** 2;
  return { mean, std: Math.sqrt(squares / n) };
}

/**
 * Statistics of a step's batch: episode outcomes from its trajectories; per agent, from the batch's columns, turn
 * counts, valid and truncated fractions, mean turn reward and response lengths; token totals and throughput.
 */
export function batchMetrics(batch: TrainingBatch, stepSeconds: number): Metrics {
  const metrics: Metrics = {};
  const outcomes = batch.trajectories.map((t) => t.outcome ?? 0);
  const { mean, std } = meanStd(outcomes);
  metrics['reward/mean'] = mean;
  metrics['reward/std'] = std;
  metrics['reward/max'] = outcomes.length ? Math.max(...outcomes) : 0;
  metrics['reward/min'] = outcomes.length ? Math.min(...outcomes) : 0;
  metrics['episode/count'] = batch.trajectories.length;
  metrics['episode/done_fraction'] = batch.trajectories.length
    ? batch.trajectories.filter((t) => t.done).length / batch.trajectories.length
    : 0;
  const agent = batch.ids.agent;
  let tokens = 0;
  let valid = 0;
  const byName = agent.names.map((name, code) => ({ name, code })).sort((a, b) => a.name.localeCompare(b.name));
  for (const { name, code } of byName) {
    const rows: number[] = [];
    for (let r = 0; r < batch.rows; r++) if (agent.codes[r] === code) rows.push(r);
    const lengths = rows.map((r) => batch.responseLengths[r]!);
    const agentTokens = lengths.reduce((a, b) => a + b, 0);
    const agentValid = rows.filter((r) => batch.valid[r]).length;
    tokens += agentTokens;
    valid += agentValid;
    metrics[`agent/${name}/turns`] = rows.length;
    metrics[`agent/${name}/valid_fraction`] = agentValid / rows.length;
    metrics[`agent/${name}/reward_mean`] = meanStd(rows.map((r) => batch.rewards[r]!)).mean;
    metrics[`agent/${name}/response_length_mean`] = meanStd(lengths).mean;
    metrics[`agent/${name}/response_length_max`] = Math.max(...lengths);
    metrics[`agent/${name}/truncated_fraction`] = rows.filter((r) => batch.truncated[r]).length / rows.length;
  }
  metrics['response/tokens'] = tokens;
  metrics['response/valid_fraction'] = batch.rows ? valid / batch.rows : 0;
  metrics['perf/tokens_per_second'] = stepSeconds > 0 ? tokens / stepSeconds : 0;
  return metrics;
}
