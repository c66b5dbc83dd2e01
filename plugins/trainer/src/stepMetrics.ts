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

function extremes(values: ArrayLike<number>): { min: number; max: number } {
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < values.length; i++) {
    min = Math.min(min, values[i]!);
    max = Math.max(max, values[i]!);
  }
  return values.length ? { min, max } : { min: 0, max: 0 };
}

/** `<prefix>/mean|std|min|max` of some values (population std; all 0 when there are none). */
function distribution(prefix: string, values: ArrayLike<number>): Metrics {
  const { mean, std } = meanStd(values);
  const { min, max } = extremes(values);
  return { [`${prefix}/mean`]: mean, [`${prefix}/std`]: std, [`${prefix}/min`]: min, [`${prefix}/max`]: max };
}

/**
 * Statistics of a step's batch, the one producer of them: `outcome/*` over its episodes' outcomes (the environment's
 * score), `reward/*` over its turns' rewards as the estimator sees them (after every `reward` tap, so a reward-shaping
 * plugin shows here and not in the outcome); episode counts; per agent, from the batch's columns, turn counts, valid
 * and truncated fractions, mean turn reward and response lengths; token totals and throughput.
 */
export function batchMetrics(batch: TrainingBatch, stepSeconds: number): Metrics {
  const episodes = batch.trajectories;
  const metrics: Metrics = {
    ...distribution(
      'outcome',
      episodes.map((t) => t.outcome ?? 0),
    ),
    ...distribution('reward', batch.rewards),
  };
  metrics['episode/count'] = episodes.length;
  metrics['episode/done_fraction'] = episodes.length ? episodes.filter((t) => t.done).length / episodes.length : 0;
  metrics['episode/turns_mean'] = episodes.length ? episodes.reduce((a, t) => a + t.turns.length, 0) / episodes.length : 0;
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
