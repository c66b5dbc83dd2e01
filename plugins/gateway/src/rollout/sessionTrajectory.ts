import { DrmasError, makeTurn, type EnvTask, type Trajectory, type Turn } from '@drmas/core';
import type { CapturedTurn } from '../capture/Sessions.js';

export interface TrajectoryIds {
  groupId: string;
  trajectoryId: string;
}

/**
 * An episode's captured calls as a trajectory: one turn per call, in call order, with the ids and log-probs as the
 * engine sampled them. Every call must name an agent (the reward allocator and the worker groups go by it). A reward
 * the agent set on a turn is its `info.turnScore`, which the `per_turn` allocator reads.
 */
export function sessionTrajectory(
  task: EnvTask,
  ids: TrajectoryIds,
  captured: readonly CapturedTurn[],
  agents: readonly string[],
): Trajectory {
  const turns = captured.map((call, index): Turn => {
    if (call.agent === undefined) {
      throw new DrmasError(
        'CONFIG_INVALID',
        `the agent function called model "${call.model}" without naming an agent, so the call cannot be trained`,
        {
          key: 'gateway.agent',
          hint: `call the model by an agent's name (${agents.join(', ')}) or send the x-drmas-agent header`,
        },
      );
    }
    const turn = makeTurn({
      ...ids,
      agentId: call.agent,
      round: 0,
      workerGroupId: call.modelId,
      index,
      promptIds: call.promptIds,
      responseIds: call.responseIds,
      logProbs: call.logProbs,
      temperature: call.temperature,
      responseText: call.text,
      valid: true,
      finishReason: call.finishReason,
    });
    if (call.reward !== undefined) turn.info = { turnScore: call.reward };
    return turn;
  });
  return { ...ids, taskId: task.id, dataSource: task.dataSource, turns, done: false };
}
