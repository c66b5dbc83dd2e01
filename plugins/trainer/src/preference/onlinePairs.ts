import type { BatchView, WorkerGroupBatch } from '@drmas/core';
import { preferenceBatch, type TurnPair } from './preferencePairs.js';

export interface OnlinePairs {
  /** The pairs as a preference batch's worker-group view (rows [chosen 0, rejected 0, ...]); undefined when none. */
  view: WorkerGroupBatch | undefined;
  pairs: number;
  /** Candidate sets (same rollout group, agent and round, two turns or more) left out because every reward was equal. */
  ties: number;
}

/**
 * Online preference pairs from a step's rollouts: the rows of one rollout group (one prompt's samples), agent and
 * round compete, and the turn of highest reward is preferred to the turn of lowest (the first of equals
 * in row order); a set whose rewards are all equal teaches no preference and is skipped. At round 0 the competing
 * turns share their prompt; at later rounds each saw its own episode's history.
 */
export function bestAgainstWorst(view: BatchView, workerGroupId: string): OnlinePairs {
  const { batch } = view;
  const sets = new Map<string, number[]>();
  for (const row of view.rows) {
    const key = `${batch.ids.group.codes[row]}/${batch.ids.agent.codes[row]}/${batch.ids.round.codes[row]}`;
    let rows = sets.get(key);
    if (!rows) sets.set(key, (rows = []));
    rows.push(row);
  }
  const pairs: TurnPair[] = [];
  let ties = 0;
  for (const rows of sets.values()) {
    if (rows.length < 2) continue;
    let best = rows[0]!;
    let worst = rows[0]!;
    for (const row of rows) {
      if (batch.rewards[row]! > batch.rewards[best]!) best = row;
      if (batch.rewards[row]! < batch.rewards[worst]!) worst = row;
    }
    if (best === worst) ties++;
    else pairs.push({ chosen: batch.turns[best]!, rejected: batch.turns[worst]! });
  }
  const pairView = pairs.length
    ? preferenceBatch(pairs)
        .workerGroups()
        .find((g) => g.workerGroupId === workerGroupId)
    : undefined;
  return { view: pairView, pairs: pairs.length, ties };
}
