import type { Trajectory } from '@drmas/core';

/** Turn counts of one agent over a set of trajectories. */
export interface AgentTurnStats {
  turns: number;
  invalidTurns: number;
  /** Turns cut at maxNewTokens. */
  truncatedTurns: number;
  responseTokens: number;
}

export function agentTurnStats(trajectories: readonly Trajectory[]): Record<string, AgentTurnStats> {
  const stats: Record<string, AgentTurnStats> = {};
  for (const turn of trajectories.flatMap((t) => t.turns)) {
    const s = (stats[turn.agentId] ??= { turns: 0, invalidTurns: 0, truncatedTurns: 0, responseTokens: 0 });
    s.turns++;
    if (!turn.valid) s.invalidTurns++;
    if (turn.finishReason === 'length') s.truncatedTurns++;
    s.responseTokens += turn.responseIds.length;
  }
  return stats;
}

function mean(values: number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}

/**
 * Metrics of a rollout: success overall and per data source, episode metrics of the environment (`env/f1`, ...),
 * and per agent turn counts, valid ratio, truncation ratio and mean response length.
 */
export function rolloutMetrics(trajectories: readonly Trajectory[]): Record<string, number> {
  const metrics: Record<string, number> = {
    'rollout/episodes': trajectories.length,
    'rollout/success': mean(trajectories.map((t) => t.outcome ?? 0)),
    'rollout/done_ratio': mean(trajectories.map((t) => (t.done ? 1 : 0))),
    'rollout/turns_per_episode': mean(trajectories.map((t) => t.turns.length)),
  };
  const bySource = new Map<string, number[]>();
  const envMetrics = new Map<string, number[]>();
  for (const t of trajectories) {
    const source = t.dataSource ?? 'unknown';
    bySource.set(source, [...(bySource.get(source) ?? []), t.outcome ?? 0]);
    const episode = (t.info?.metrics ?? {}) as Record<string, number>;
    for (const [name, value] of Object.entries(episode)) envMetrics.set(name, [...(envMetrics.get(name) ?? []), value]);
  }
  for (const [source, outcomes] of bySource) metrics[`rollout/success/${source}`] = mean(outcomes);
  for (const [name, values] of envMetrics) metrics[`env/${name}`] = mean(values);
  for (const [agentId, s] of Object.entries(agentTurnStats(trajectories))) {
    metrics[`agent/${agentId}/turns`] = s.turns;
    metrics[`agent/${agentId}/valid_ratio`] = (s.turns - s.invalidTurns) / s.turns;
    metrics[`agent/${agentId}/truncated_ratio`] = s.truncatedTurns / s.turns;
    metrics[`agent/${agentId}/response_length`] = s.responseTokens / s.turns;
  }
  return metrics;
}
