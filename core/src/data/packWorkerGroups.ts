import type { RolloutBatch, Turn } from './Turn.js';
import type { WorkerGroupBatch } from './WorkerGroupBatch.js';

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
    responseIds,
    responseMask,
    advantages,
    returns,
    rolloutLogProbs,
  };
}
