/**
 * The unit of training data: one agent turn, i.e. one LLM call inside an episode.
 * Token ids are kept exactly as sampled; text is for humans and parsers, never re-tokenized for training.
 */
export interface TurnKey {
  /** Shared by the n rollouts of one prompt (veRL's `uid`). */
  groupId: string;
  /** One rollout, i.e. one episode (veRL's `traj_uid`). */
  trajectoryId: string;
  /** The role that produced the turn (`solver`, `verifier`, ...). */
  agentId: string;
  /** The round of the episode the turn was taken in (0-based). */
  round: number;
  /** Worker group (model id) that trains on this turn. */
  workerGroupId: string;
}

export interface Turn extends TurnKey {
  /** @deprecated since 0.2.0: `round` */
  readonly step: number;
  /** Position of this turn within its trajectory (0-based, counts every agent call). */
  index: number;
  promptIds: number[];
  responseIds: number[];
  /** Log-prob of each response token under the rollout engine's policy at `temperature`, as sampled. */
  logProbs: number[];
  /** The sampling temperature (default 1; 0, greedy, counts as 1): the trainer scores and trains the turn at it. */
  temperature?: number;
  promptText?: string;
  responseText?: string;
  /** The parsed action, e.g. `{ kind: 'answer', text: '42' }`; undefined when nothing could be parsed. */
  action?: unknown;
  /** False when the output was malformed; such turns are penalised, not thrown. */
  valid: boolean;
  /** Why the output was invalid, for auditing. */
  invalidReason?: string;
  finishReason?: 'stop' | 'length';
  /** Scalar reward of this turn, filled by the reward hook; packed into `TrainingBatch.rewards`. */
  reward?: number;
  /** Optional per-token rewards (same length as responseIds); overrides `reward` placement when present. */
  tokenRewards?: number[];
  /** The environment observation this turn acted on (GiGPO anchor states; audits). */
  observation?: string;
  /** Free-form data an orchestra or reward allocator attaches (e.g. F1 gain of an answer). */
  info?: Record<string, unknown>;
}

/** A turn's own fields: all but the deprecated `step`, which `makeTurn` adds. */
export type TurnFields = Omit<Turn, 'step'>;

function roundOfTurn(this: TurnFields): number {
  return this.round;
}

/**
 * Makes `fields` (the object itself, not a copy) a Turn by adding `step`, the name of `round` before 0.2.0, as a
 * non-enumerable getter: JSON, structuredClone and object spreads carry `round` alone, while code written against 0.1
 * (custom allocators, estimators, reward taps) still reads `turn.step`. Every Turn is made here, turns that crossed a
 * process boundary as JSON included.
 */
export function makeTurn(fields: TurnFields): Turn {
  // defineProperty's type keeps its argument's type; the getter added here is what makes the fields a Turn.
  return Object.defineProperty(fields, 'step', { get: roundOfTurn, enumerable: false, configurable: true }) as Turn;
}

/** `makeTurn` on every turn of `trajectory` (in place), for trajectories parsed from JSON. */
export function makeTrajectoryTurns(trajectory: Trajectory): Trajectory {
  for (const turn of trajectory.turns) makeTurn(turn);
  return trajectory;
}

export interface Trajectory {
  groupId: string;
  trajectoryId: string;
  /** Identifies the task, e.g. the dataset row id. */
  taskId: string;
  /** Data source name for per-source metrics (`math-synthetic`, `nq`, ...). */
  dataSource?: string;
  turns: Turn[];
  /** Episode outcome, filled by the environment or the reward hook (e.g. 1 for a correct final answer). */
  outcome?: number;
  /** Whether the episode ended by itself (true) or was cut by a step limit (false). */
  done: boolean;
  info?: Record<string, unknown>;
}

export interface RolloutBatch {
  trajectories: Trajectory[];
  /** Arbitrary per-batch metrics a producer or filter adds (`rollout/filtered_groups`, ...). */
  metrics: Record<string, number>;
}
