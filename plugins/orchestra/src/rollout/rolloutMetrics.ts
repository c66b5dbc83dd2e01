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
 * What only the orchestra knows of a rollout: the outcome per data source (`outcome/<source>/mean`) and the
 * environment's episode metrics (`env/f1`, ...). Episode counts, outcomes, rewards and per-agent statistics of the
 * step are the trainer's (`batchMetrics`), computed once from the batch the step trains on.
 */
export function rolloutMetrics(trajectories: readonly Trajectory[]): Record<string, number> {
  const metrics: Record<string, number> = {};
  const bySource = new Map<string, number[]>();
  const envMetrics = new Map<string, number[]>();
  for (const t of trajectories) {
    const source = t.dataSource ?? 'unknown';
    bySource.set(source, [...(bySource.get(source) ?? []), t.outcome ?? 0]);
    const episode = (t.info?.metrics ?? {}) as Record<string, number>;
    for (const [name, value] of Object.entries(episode)) envMetrics.set(name, [...(envMetrics.get(name) ?? []), value]);
  }
  for (const [source, outcomes] of bySource) metrics[`outcome/${source}/mean`] = mean(outcomes);
  for (const [name, values] of envMetrics) metrics[`env/${name}`] = mean(values);
  return metrics;
}
