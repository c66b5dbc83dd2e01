import type { RolloutBatch, Trajectory, Turn } from '@drmas/core';
import type { AllocationContext, RewardAllocator } from './RewardAllocator.js';

/** Gives every turn `score(turn, ...)` less its agent's invalid penalty when the turn is invalid. */
export function allocateEach(
  batch: RolloutBatch,
  context: AllocationContext,
  score: (turn: Turn, outcome: number, trajectory: Trajectory) => number,
): RolloutBatch {
  for (const trajectory of batch.trajectories) {
    const outcome = trajectory.outcome ?? 0;
    for (const turn of trajectory.turns) {
      turn.reward = score(turn, outcome, trajectory) - (turn.valid ? 0 : context.invalidPenalty(turn.agentId));
    }
  }
  return batch;
}

/** Dr. MAS: every turn of every agent gets the episode outcome, minus the agent's penalty when the turn is invalid. */
export const drmasAllocator: RewardAllocator = {
  name: 'drmas',
  allocate: (batch, context) => allocateEach(batch, context, (_turn, outcome) => outcome),
};

/**
 * Each turn gets its turn-level score, `turn.info.turnScore` (0 when none), minus the invalid penalty. Math scores
 * every Solver turn on its own answer and every Verifier turn on its verdict; search gives an answer its F1 gain
 * and a search 0.
 */
export const perTurnAllocator: RewardAllocator = {
  name: 'per_turn',
  allocate: (batch, context) =>
    allocateEach(batch, context, (turn) => {
      const score = turn.info?.turnScore;
      return typeof score === 'number' ? score : 0;
    }),
};
