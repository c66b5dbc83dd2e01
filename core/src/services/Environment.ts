import { createToken } from '../di/Token.js';
import { adaptStepEnvironment } from './stepEnvironment.js';

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
 * What a row hands the environment at the end of a round: `answer` (math, search), `search` (a query), or
 * `invalid`. `agentId` and `turnIndex` name the turn that produced it (the turn that gets the round's score).
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
  /** True once the episode ended by its own action (an answer); false while open or when cut by `maxRounds`. */
  readonly done: boolean;
  /** The episode's outcome: 1 for a correct final answer, else 0. */
  readonly outcome: number;
  /** Score of the last round's action (e.g. the F1 gain of an answer); the `per_turn` allocator's turn score. */
  readonly roundScore?: number;
  /**
   * Scores an action as `advance` would score it as the final answer (math: 1 when right, else 0), without acting:
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
 * An environment: a resumable source of training tasks, a held-out split, and episodes that advance together, one
 * round at a time (one round: the orchestra's agents act, then one `advance` call takes every row's action, so a
 * retriever sees one batched request). Chosen by name with `env.name`; plugins provide one with
 * `ctx.provide(Environment, name, environment)` and add their settings to `env`.
 */
export interface Environment<T extends EnvTask = EnvTask> {
  readonly name: string;
  /** Rounds at most per episode (`env.maxRounds`). */
  readonly maxRounds: number;
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
  /** Applies `actions[i]` to `episodes[i]` (one round); every episode given is open. */
  advance(episodes: Episode[], actions: EnvAction[]): Promise<void>;
}

/** @deprecated since 0.2.0: an episode of a `StepEnvironment`; write `roundScore` instead of `stepScore`. */
export interface StepEpisode extends Omit<Episode, 'roundScore'> {
  /** @deprecated since 0.2.0: `roundScore`. */
  readonly stepScore?: number;
}

/**
 * @deprecated since 0.2.0: an environment written before rounds were named (`maxSteps`, `step`, `stepScore`). Still
 * provided as an `Environment` for one release: the kernel adapts it once, when it is resolved, with a warning.
 */
export interface StepEnvironment<T extends EnvTask = EnvTask> extends Omit<Environment<T>, 'maxRounds' | 'advance' | 'reset'> {
  /** @deprecated since 0.2.0: `maxRounds`. */
  readonly maxSteps: number;
  /** @deprecated since 0.2.0: `reset` returning an `Episode` (with `roundScore`). */
  reset(task: T): StepEpisode;
  /** @deprecated since 0.2.0: `advance`. */
  step(episodes: StepEpisode[], actions: EnvAction[]): Promise<void>;
}

export const Environment = createToken<Environment, Environment | StepEnvironment>('Environment', {
  label: 'environment',
  configKey: 'env.name',
  named: true,
  adapt: adaptStepEnvironment,
});
