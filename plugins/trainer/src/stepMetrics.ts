import type { Metrics, RolloutBatch } from '@drmas/core';

function meanStd(values: number[]): { mean: number; std: number } {
  if (values.length === 0) return { mean: 0, std: 0 };
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length;
  return { mean, std: Math.sqrt(variance) };
}

/** Episode and per-agent statistics of a step's batch: outcomes, rewards, validity, lengths, token counts. */
export function batchMetrics(batch: RolloutBatch, stepSeconds: number): Metrics {
  const metrics: Metrics = {};
  const outcomes = batch.trajectories.map((t) => t.outcome ?? 0);
  const { mean, std } = meanStd(outcomes);
  metrics['reward/mean'] = mean;
  metrics['reward/std'] = std;
  metrics['reward/max'] = outcomes.length ? Math.max(...outcomes) : 0;
  metrics['reward/min'] = outcomes.length ? Math.min(...outcomes) : 0;
  metrics['episode/count'] = batch.trajectories.length;
  metrics['episode/done_fraction'] = batch.trajectories.length ? batch.trajectories.filter((t) => t.done).length / batch.trajectories.length : 0;
  const turns = batch.trajectories.flatMap((t) => t.turns);
  const byAgent = new Map<string, typeof turns>();
  for (const turn of turns) byAgent.set(turn.agentId, [...(byAgent.get(turn.agentId) ?? []), turn]);
  let tokens = 0;
  for (const [agent, list] of [...byAgent.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const lengths = list.map((t) => t.responseIds.length);
    tokens += lengths.reduce((a, b) => a + b, 0);
    metrics[`agent/${agent}/turns`] = list.length;
    metrics[`agent/${agent}/valid_fraction`] = list.filter((t) => t.valid).length / list.length;
    metrics[`agent/${agent}/reward_mean`] = meanStd(list.map((t) => t.reward ?? 0)).mean;
    metrics[`agent/${agent}/response_length_mean`] = meanStd(lengths).mean;
    metrics[`agent/${agent}/response_length_max`] = Math.max(...lengths);
    metrics[`agent/${agent}/truncated_fraction`] = list.filter((t) => t.finishReason === 'length').length / list.length;
  }
  metrics['response/tokens'] = tokens;
  metrics['response/valid_fraction'] = turns.length ? turns.filter((t) => t.valid).length / turns.length : 0;
  metrics['perf/tokens_per_second'] = stepSeconds > 0 ? tokens / stepSeconds : 0;
  return metrics;
}
