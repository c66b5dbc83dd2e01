import type { Trajectory } from '@drmas/core';

/** Why an episode failed; `environment_failed`: the environment could not run it (`Episode.failure`, a remote server down). */
export type FailureReason =
  | 'llm_timeout'
  | 'tool_timeout'
  | 'episode_timeout'
  | 'batch_timeout'
  | 'cancelled'
  | 'tool_failed'
  | 'environment_failed'
  /** The agent's request failed: its prompt does not fit the model, or the engine's generate threw for it. */
  | 'llm_failed';

/** One node execution of an episode's graph (or the environment's round after it). */
export interface NodeExecution {
  /** The graph node, or `env.step` for the environment's round. */
  node: string;
  kind: 'agent' | 'tool' | 'function' | 'env';
  /** 0-based round. */
  step: number;
  agent?: string;
  /** The model (worker group) the agent sampled from. */
  modelId?: string;
  /** Index of the Turn this execution produced in the trajectory. */
  turn?: number;
  /** The prompt text (agent) or the action (env). */
  input?: unknown;
  /** The response text (agent), the tool's result, or what the environment answered. */
  output?: unknown;
  /** The agent's parsed action and whether it was valid. */
  parsed?: { action?: unknown; valid: boolean; reason?: string };
  stateBefore: unknown;
  stateAfter: unknown;
  /** The episode's metrics after the environment's round (`f1`, ...), for the allocators' deltas. */
  metrics?: Record<string, number>;
  /** ms from the episode's start. */
  startedMs: number;
  endedMs: number;
  /** ms the agent's request waited in its model's queue, and the rows of the batch that sampled it. */
  queueWaitMs?: number;
  batchRows?: number;
  /** Set when the execution did not complete. */
  error?: string;
}

/** One episode's structured record: every node execution, its end, and (when it failed) why and where. */
export interface EpisodeTrace {
  trajectoryId: string;
  groupId: string;
  taskId: string;
  status: 'completed' | 'failed';
  failure?: { reason: FailureReason; message: string; node?: string };
  outcome: number;
  executions: NodeExecution[];
  durationMs: number;
}

/** The trace the async executor attached to a trajectory, if any. */
export function traceOf(trajectory: Trajectory): EpisodeTrace | undefined {
  return trajectory.info?.trace as EpisodeTrace | undefined;
}
