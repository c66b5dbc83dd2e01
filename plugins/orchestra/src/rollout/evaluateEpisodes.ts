import type { EnvTask, Trajectory } from '@drmas/core';
import type { AgentSampling } from '../agents/Agent.js';
import type { EpisodeRunner } from './OrchestraRunner.js';
import { agentTurnStats, type AgentTurnStats } from './rolloutMetrics.js';

/** Validation sampling of Dr. MAS. */
export const EVAL_SAMPLING: Readonly<Partial<AgentSampling>> = Object.freeze({ temperature: 0.6, topP: 0.95 });

export interface EvaluateOptions {
  /** Samples per task. */
  k: number;
  /** Over EVAL_SAMPLING, over each agent's own settings. */
  sampling?: Partial<AgentSampling>;
  seed?: number;
  /** Tasks run together in one batch of episodes (k rows each); default 32. */
  tasksPerBatch?: number;
}

export interface TaskOutcomes {
  taskId: string;
  dataSource: string;
  /** The k episode outcomes (0/1), in sample order. */
  outcomes: number[];
}

export interface EvaluationResult {
  tasks: TaskOutcomes[];
  /** Turn counts per agent over all evaluation episodes. */
  agents: Record<string, AgentTurnStats>;
  trajectories: Trajectory[];
}

/** Runs k episodes of each task with validation sampling; returns the raw outcomes (avg@k / pass@k inputs). */
export async function evaluateEpisodes(
  runner: EpisodeRunner,
  tasks: readonly EnvTask[],
  options: EvaluateOptions,
): Promise<EvaluationResult> {
  const { k, seed = 0, tasksPerBatch = 32 } = options;
  const sampling = { ...EVAL_SAMPLING, ...options.sampling };
  const results: TaskOutcomes[] = [];
  const trajectories: Trajectory[] = [];
  for (let start = 0; start < tasks.length; start += tasksPerBatch) {
    const chunk = tasks.slice(start, start + tasksPerBatch);
    const run = await runner.run({ tasks: chunk, samplesPerTask: k, seed: seed + start, idPrefix: `eval-b${start}`, sampling });
    chunk.forEach((task, t) => {
      const own = run.trajectories.slice(t * k, (t + 1) * k);
      results.push({ taskId: task.id, dataSource: task.dataSource, outcomes: own.map((tr) => tr.outcome ?? 0) });
    });
    trajectories.push(...run.trajectories);
  }
  return { tasks: results, agents: agentTurnStats(trajectories), trajectories };
}
