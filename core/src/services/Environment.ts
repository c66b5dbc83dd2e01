import { createToken } from '../di/Token.js';

/** One task (prompt) of an environment. */
export interface EnvTask {
  id: string;
  /** For per-source metrics (`synthetic-arithmetic`, `kb-2hop`, `nq`, ...). */
  dataSource: string;
}

export interface EnvTaskBatch<T extends EnvTask = EnvTask> {
  tasks: T[];
  /** Pass to the next `batch` call; saved in checkpoints for an exact resume. */
  nextCursor: number;
}

/**
 * What a row hands the environment after an orchestra step: `answer` (math, search), `search` (a query), or
 * `invalid`. `agentId` and `turnIndex` name the turn that produced it (the turn that gets the step's score).
 */
export interface EnvAction {
  type: 'answer' | 'search' | 'invalid' | (string & {});
  content: string;
  agentId?: string;
  turnIndex?: number;
}

/** The state of one rollout of one task. */
export interface Episode {
  readonly task: EnvTask;
  /** True once the episode ended by its own action (an answer); false while open or when cut by the step limit. */
  readonly done: boolean;
  /** The episode's outcome: 1 for a correct final answer, else 0. */
  readonly outcome: number;
  /** Score of the last step's action (e.g. the F1 gain of an answer); the `per_turn` allocator's turn score. */
  readonly stepScore?: number;
  /**
   * Scores an action as `step` would score it as the final answer (math: 1 when right, else 0), without acting:
   * how an orchestra gives turn-level scores to answers that were not submitted.
   */
  judge?(action: EnvAction): number;
  /** What the agents see of the environment (`{observation}` in prompts). */
  observation(): string;
  /** Task variables for prompts, e.g. `{ question }`. */
  variables(): Record<string, string>;
  /** Numbers for logs, averaged over episodes (`f1`, `searches`, ...). */
  metrics(): Record<string, number>;
  /**
   * Why the episode could not be run to its end (the server of a remote environment failed), once it could not; the
   * orchestra records it on the trajectory (`info.failure`) and trains none of its turns, as their reward is unknown.
   */
  readonly failure?: string;
}

/**
 * An environment: a resumable source of training tasks, a held-out split, and episodes that advance together
 * (one `step` call for all rows, so a retriever sees one batched request). Chosen by name with `env.name`;
 * plugins provide one with `ctx.provide(Environment, name, environment)` and add their settings to `env`.
 */
export interface Environment<T extends EnvTask = EnvTask> {
  readonly name: string;
  /** Environment steps at most per episode. */
  readonly maxSteps: number;
  /** Loads data, builds indexes (idempotent); called in `setup` before the first batch. */
  init(): Promise<void>;
  /**
   * Called (and awaited) before `batch` with the same arguments, by an environment whose tasks live elsewhere (a
   * remote one fetches them here, so `batch` can stay synchronous).
   */
  prepare?(cursor: number, count: number): Promise<void>;
  /** Training tasks from `cursor` on; the same cursor gives the same tasks. */
  batch(cursor: number, count: number): EnvTaskBatch<T>;
  /** The held-out tasks, never handed out by `batch`. */
  test(): T[];
  /** Starts an episode of `task` (gym's `reset`). */
  reset(task: T): Episode;
  /** Applies `actions[i]` to `episodes[i]`; every episode given is open. */
  step(episodes: Episode[], actions: EnvAction[]): Promise<void>;
}

export const Environment = createToken<Environment>('Environment', { label: 'environment', configKey: 'env.name', named: true });
