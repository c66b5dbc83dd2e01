import type { Environment, EnvTask, Trajectory } from '@drmas/core';
import type { Agent, AgentSampling } from '../agents/Agent.js';
import type { OrchestraRow } from '../blocks/Block.js';
import type { Orchestra } from '../orchestras/Orchestra.js';

/** What `createRows` needs of a rollout request. */
export interface RowsRequest {
  tasks: readonly EnvTask[];
  samplesPerTask: number;
  idPrefix: string;
  firstTask?: number;
}

/** One row per episode: `samplesPerTask` episodes of each task, numbered from `firstTask`'s first row. */
export function createRows(environment: Environment, request: RowsRequest): OrchestraRow[] {
  const rows: OrchestraRow[] = [];
  const firstTask = request.firstTask ?? 0;
  const firstRow = firstTask * request.samplesPerTask;
  request.tasks.forEach((task, t) => {
    const groupId = `${request.idPrefix}-p${firstTask + t}`;
    for (let s = 0; s < request.samplesPerTask; s++) {
      const trajectory: Trajectory = {
        groupId,
        trajectoryId: `${groupId}-n${s}`,
        taskId: task.id,
        dataSource: task.dataSource,
        turns: [],
        done: false,
      };
      rows.push({
        index: firstRow + rows.length,
        episode: environment.reset(task),
        trajectory,
        teamContext: [],
        outputs: new Map(),
      });
    }
  });
  return rows;
}

/** `turn.info.turnScore` of a round's turns: the orchestra's turn scores when it has them, else the acting turn's round score. */
export function recordTurnScores(orchestra: Orchestra, row: OrchestraRow, round: number, actingTurn: number | undefined): void {
  const { episode, trajectory } = row;
  const scores = new Map<number, number>();
  if (actingTurn !== undefined && episode.roundScore !== undefined) scores.set(actingTurn, episode.roundScore);
  if (orchestra.turnScores) {
    for (const [index, score] of orchestra.turnScores(
      trajectory.turns.filter((turn) => turn.round === round),
      episode.judge?.bind(episode),
      episode,
    ))
      scores.set(index, score);
  }
  for (const [index, score] of scores) {
    const turn = trajectory.turns[index];
    if (!turn)
      throw new Error(
        `orchestra "${orchestra.name}" scored turn ${index}, but trajectory ${trajectory.trajectoryId} has ${trajectory.turns.length} turns`,
      );
    turn.info = { ...turn.info, turnScore: score };
  }
}

/** The trajectory's end: whether the episode ended by its own action, its outcome and its metrics. */
export function finishTrajectory(row: OrchestraRow): void {
  row.trajectory.done = row.episode.done;
  row.trajectory.outcome = row.episode.outcome;
  row.trajectory.info = { ...row.trajectory.info, metrics: row.episode.metrics() };
}

/**
 * The lock-step runner's record of an episode whose environment failed (`Episode.failure`: a remote server down):
 * the reason on the trajectory, outcome 0, and no turns to train, since their reward is unknown.
 */
export function recordEnvironmentFailure(row: OrchestraRow): void {
  const message = row.episode.failure;
  if (message === undefined) return;
  row.trajectory.outcome = 0;
  row.trajectory.done = false;
  row.trajectory.info = { ...row.trajectory.info, failure: { reason: 'environment_failed', message } };
  row.trajectory.turns = [];
}

/** The `GenerateRequest` sampling fields of an agent call. */
export function generateSettings(agent: Agent, sampling: AgentSampling) {
  return {
    temperature: sampling.temperature,
    topP: sampling.topP,
    topK: sampling.topK,
    maxNewTokens: sampling.maxNewTokens,
    stopStrings: agent.stop.length > 0 ? [...agent.stop] : undefined,
  };
}
