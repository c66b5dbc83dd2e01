import type { RolloutBatch, Turn } from './Turn.js';
import type { WorkerGroupBatch } from './WorkerGroupBatch.js';

/** The temperature a turn is scored at: its sampling temperature, with greedy (0) and unset counting as 1. */
export function scoringTemperature(temperature: number | undefined): number {
  return temperature === undefined || temperature <= 0 ? 1 : temperature;
}

/**
 * Packs the turns of a rollout batch into one columnar batch per worker group (sorted by id), in trajectory
 * order. A worker group's batch holds only its own agents' turns.
 */
export function packWorkerGroups(batch: RolloutBatch): WorkerGroupBatch[] {
  const byGroup = new Map<string, Turn[]>();
  for (const trajectory of batch.trajectories) {
    for (const turn of trajectory.turns) {
      const list = byGroup.get(turn.workerGroupId) ?? [];
      list.push(turn);
      byGroup.set(turn.workerGroupId, list);
    }
  }
  return [...byGroup.keys()].sort().map((id) => packTurns(id, byGroup.get(id)!));
}

export function packTurns(workerGroupId: string, turns: Turn[]): WorkerGroupBatch {
  const rows = turns.length;
  const length = turns.reduce((max, t) => Math.max(max, t.responseIds.length), 0);
  const responseIds = new Int32Array(rows * length);
  const responseMask = new Float32Array(rows * length);
  const advantages = new Float32Array(rows * length);
  const rolloutLogProbs = new Float32Array(rows * length);
  const hasReturns = turns.some((t) => t.returns);
  const tempered = turns.some((t) => scoringTemperature(t.temperature) !== 1);
  const returns = hasReturns ? new Float32Array(rows * length) : undefined;
  turns.forEach((turn, row) => {
    const offset = row * length;
    turn.responseIds.forEach((id, j) => {
      responseIds[offset + j] = id;
      responseMask[offset + j] = turn.excludeFromLoss ? 0 : 1;
      rolloutLogProbs[offset + j] = turn.logProbs[j] ?? 0;
      advantages[offset + j] = turn.advantages?.[j] ?? 0;
      if (returns) returns[offset + j] = turn.returns?.[j] ?? 0;
    });
  });
  return {
    workerGroupId,
    agentIds: [...new Set(turns.map((t) => t.agentId))].sort(),
    rows,
    responseLength: length,
    keys: turns.map(({ groupId, trajectoryId, agentId, step, workerGroupId: wg }) => ({ groupId, trajectoryId, agentId, step, workerGroupId: wg })),
    promptIds: turns.map((t) => Int32Array.from(t.promptIds)),
    responseLengths: Int32Array.from(turns, (t) => t.responseIds.length),
    responseIds,
    responseMask,
    advantages,
    returns,
    ...(tempered ? { temperatures: Float32Array.from(turns, (t) => scoringTemperature(t.temperature)) } : {}),
    rolloutLogProbs,
  };
}

/** A batch of the given rows of `batch` (in that order), for mini-batches. */
export function selectRows(batch: WorkerGroupBatch, rows: readonly number[]): WorkerGroupBatch {
  const L = batch.responseLength;
  const pick = <A extends Float32Array | Int32Array>(source: A | undefined): A | undefined => {
    if (!source) return undefined;
    const out = new (source.constructor as new (n: number) => A)(rows.length * L);
    rows.forEach((row, i) => out.set(source.subarray(row * L, (row + 1) * L), i * L));
    return out;
  };
  const keys = rows.map((r) => batch.keys[r]);
  return {
    workerGroupId: batch.workerGroupId,
    agentIds: [...new Set(keys.map((k) => k.agentId))].sort(),
    rows: rows.length,
    responseLength: L,
    keys,
    promptIds: rows.map((r) => batch.promptIds[r]),
    responseLengths: Int32Array.from(rows, (r) => batch.responseLengths[r]),
    responseIds: pick(batch.responseIds)!,
    responseMask: pick(batch.responseMask)!,
    advantages: pick(batch.advantages)!,
    returns: pick(batch.returns),
    ...(batch.temperatures ? { temperatures: Float32Array.from(rows, (r) => batch.temperatures![r]) } : {}),
    oldLogProbs: pick(batch.oldLogProbs),
    rolloutLogProbs: pick(batch.rolloutLogProbs)!,
    refLogProbs: pick(batch.refLogProbs),
  };
}

/** Rows with a nonzero advantage on some trained token: the only rows an inert loss (`zeroAdvantageRowsInert`) learns from. */
export function rowsWithAdvantage(batch: WorkerGroupBatch): number[] {
  const R = batch.responseLength;
  const rows: number[] = [];
  for (let r = 0; r < batch.rows; r++) {
    for (let t = 0; t < R; t++) {
      if (batch.responseMask[r * R + t] !== 0 && batch.advantages[r * R + t] !== 0) {
        rows.push(r);
        break;
      }
    }
  }
  return rows;
}
