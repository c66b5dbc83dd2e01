import { appendFileSync } from 'node:fs';
import type { TrainingBatch } from '@drmas/core';

/**
 * Appends the sampled turns of a step to `rollouts.jsonl`: prompts, responses, parsed actions, validity, rewards and
 * advantages, one line per turn, for auditing what the policy learns (reward hacking shows here), and one line per
 * failed episode with its reason (`failed: true`, `failure`). Numbers come from
 * the batch's columns, text from its turns. `limit` bounds the trajectories logged per step (the first ones).
 */
export function appendRollouts(file: string, step: number, batch: TrainingBatch, limit: number): void {
  const lines: string[] = [];
  const R = batch.responseLength;
  let row = 0;
  for (const trajectory of batch.trajectories.slice(0, limit)) {
    const failure = trajectory.info?.failure;
    // A failed episode (timed out, its environment's server down) gets a line of its own: it may have no turns to log.
    if (failure !== undefined) {
      lines.push(
        JSON.stringify({
          step,
          groupId: trajectory.groupId,
          trajectoryId: trajectory.trajectoryId,
          taskId: trajectory.taskId,
          dataSource: trajectory.dataSource,
          failed: true,
          failure,
          outcome: trajectory.outcome,
          turns: trajectory.turns.length,
        }),
      );
    }
    for (const turn of trajectory.turns) {
      lines.push(
        JSON.stringify({
          step,
          groupId: turn.groupId,
          trajectoryId: turn.trajectoryId,
          taskId: trajectory.taskId,
          dataSource: trajectory.dataSource,
          agent: turn.agentId,
          workerGroup: turn.workerGroupId,
          envStep: turn.round,
          index: turn.index,
          prompt: turn.promptText,
          response: turn.responseText,
          action: turn.action,
          valid: turn.valid,
          invalidReason: turn.invalidReason,
          finishReason: turn.finishReason,
          reward: batch.rewards[row],
          advantage: batch.advantages[row * R],
          outcome: trajectory.outcome,
          responseTokens: batch.responseLengths[row],
        }),
      );
      row++;
    }
  }
  if (lines.length) appendFileSync(file, `${lines.join('\n')}\n`);
}
