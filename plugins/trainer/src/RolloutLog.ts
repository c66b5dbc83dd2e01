import { appendFileSync } from 'node:fs';
import type { RolloutBatch } from '@drmas/core';

/**
 * Appends the sampled turns of a step to `rollouts.jsonl`: prompts, responses, parsed actions, validity,
 * rewards and advantages, one line per turn, for auditing what the policy learns (reward hacking shows here).
 * `limit` bounds the trajectories logged per step (the first ones of the batch).
 */
export function appendRollouts(file: string, step: number, batch: RolloutBatch, limit: number): void {
  const lines: string[] = [];
  for (const trajectory of batch.trajectories.slice(0, limit)) {
    for (const turn of trajectory.turns) {
      lines.push(JSON.stringify({
        step,
        groupId: turn.groupId,
        trajectoryId: turn.trajectoryId,
        taskId: trajectory.taskId,
        dataSource: trajectory.dataSource,
        agent: turn.agentId,
        workerGroup: turn.workerGroupId,
        envStep: turn.step,
        index: turn.index,
        prompt: turn.promptText,
        response: turn.responseText,
        action: turn.action,
        valid: turn.valid,
        invalidReason: turn.invalidReason,
        finishReason: turn.finishReason,
        reward: turn.reward,
        advantage: turn.advantages?.[0],
        outcome: trajectory.outcome,
        responseTokens: turn.responseIds.length,
      }));
    }
  }
  if (lines.length) appendFileSync(file, `${lines.join('\n')}\n`);
}
