import { z } from '@drmas/core';
import { graphConfigSchema } from '../graph/graphConfig.js';
import { ORCHESTRA_LIMITS } from './orchestraLimits.js';

export { ORCHESTRA_LIMITS } from './orchestraLimits.js';

const timeoutMs = z.number().int().min(0).max(ORCHESTRA_LIMITS.timeoutMs).default(0);

/**
 * `rollout.executor`: how a step's episodes run in this process. `lockstep` (the default) runs the orchestra's
 * blocks on the whole batch, one generate per agent call for every row that reaches it; `async` runs each episode
 * as its own task through the orchestra's graph, its agent calls micro-batched per model.
 */
export const executorSection = z.strictObject({
  kind: z.enum(['lockstep', 'async']).default('lockstep'),
  /** Rows per generate call at most (async). */
  maxBatchSize: z.number().int().positive().max(ORCHESTRA_LIMITS.maxBatchSize).default(64),
  /** How long a model's first queued request waits for others before its batch goes (async). */
  maxWaitMs: z.number().min(0).max(ORCHESTRA_LIMITS.maxWaitMs).default(5),
  /** Episodes running at once (async); the others wait for a slot. */
  maxInflightEpisodes: z.number().int().positive().max(ORCHESTRA_LIMITS.maxInflightEpisodes).default(1024),
  /** Generate calls in flight at once per model (async). */
  modelConcurrency: z.number().int().positive().max(ORCHESTRA_LIMITS.modelConcurrency).default(1),
  /** Timeouts in ms (0: none): one agent call, one tool call (and round), one episode, the whole batch. */
  timeouts: z.strictObject({ llmMs: timeoutMs, toolMs: timeoutMs, episodeMs: timeoutMs, batchMs: timeoutMs }).prefault({}),
  /** Whether the turns of a timed-out or failed episode train (`train`, with its outcome 0) or not (`skip`). */
  failedEpisodes: z.enum(['train', 'skip']).default('skip'),
});

/** The `orchestra` section: which orchestra runs, and settings its blocks read from `context.settings`. */
export const orchestraSection = z.strictObject({
  /** An Orchestra registered by name (`math`, `cory`, `majority_vote`, `summary`, `debate`, `graph`; presets add theirs: `search`, `code`, ...). */
  name: z.string().min(1).default('math'),
  /** Solves at most per math episode (Dr. MAS max_loop_num); read by `loopUntil` blocks. */
  maxLoops: z.number().int().min(1).max(ORCHESTRA_LIMITS.maxLoops).default(2),
  /** K: the solvers of `majority_vote` and `summary` (one `solver` role sampled K times). */
  solvers: z.number().int().min(1).max(ORCHESTRA_LIMITS.solvers).default(3),
  /** The debaters of `debate`, in speaking order; each a role of its own (`agents.<name>`). */
  debaters: z
    .array(z.string().regex(/^[a-z][a-z0-9_]*$/, 'a debater is a lower-case role name (letters, digits, _), e.g. "pro"'))
    .min(2)
    .max(ORCHESTRA_LIMITS.debaters)
    .refine((names) => new Set(names).size === names.length && !names.includes('judge'), {
      message: 'debaters must be distinct and none may be "judge" (the judge model\'s role)',
    })
    .default(['pro', 'con']),
  /** Rounds of `debate`: each debater speaks once per round. */
  rounds: z.number().int().min(1).max(ORCHESTRA_LIMITS.rounds).default(2),
  /** Who decides `debate`: `none` (the majority of the last answers, or the environment's judge) or `model` (a `judge` agent's verdict). */
  judge: z.enum(['none', 'model']).default('none'),
  /**
   * How `majority_vote` and `debate` group answers: an AnswerFormat by name (`math`: env-math's, equal as math, so `4`,
   * `4.0` and `\frac{8}{2}` are one answer).
   */
  answerFormat: z.string().min(1).default('math'),
  /** A workflow graph written in the config: the orchestra `graph` (`orchestra.name: graph`), run by the async executor. */
  graph: graphConfigSchema.optional(),
});

/** The `rollout` section: episodes per training step. */
export const rolloutSection = z.strictObject({
  /** Tasks drawn from the environment's training source per step. */
  promptsPerStep: z.number().int().positive().max(ORCHESTRA_LIMITS.promptsPerStep).default(4),
  /** Episodes per task (the group size n); they share a groupId. */
  samplesPerPrompt: z.number().int().positive().max(ORCHESTRA_LIMITS.samplesPerPrompt).default(4),
  /**
   * Where a step's episodes run: `local` (in this process, on the worker groups' rollout engines) or `bullmq`
   * (rollout worker processes, `drmas rollout-worker`, fed through Redis by the `rollout-bullmq` plugin).
   */
  workers: z.enum(['local', 'bullmq']).default('local'),
  /**
   * What keys each row's sampling stream: `position` (its place in each generate call: how runs sampled before
   * rollout workers, the default in-process) or `row` (its index in the step's batch, so a row samples the same
   * tokens whichever rows share its call: what rollout workers and the async executor need, and their default).
   */
  sampleStreams: z.enum(['position', 'row']).optional(),
  executor: executorSection.prefault({}),
});

/** The `reward` section. */
export const rewardSection = z.strictObject({
  /** A RewardAllocator by name: `drmas` (outcome on every turn) or `per_turn` (turn.info.turnScore). */
  allocator: z.string().min(1).default('drmas'),
  /** Agents whose turns `f1_delta` / `pass_rate_delta` give the metric's value, not its change (M-ASK: planning, answer). */
  absoluteAgents: z.array(z.string().min(1)).default([]),
});

export type OrchestraSettings = z.output<typeof orchestraSection>;
export type RolloutSettings = z.output<typeof rolloutSection>;
export type ExecutorSettings = z.output<typeof executorSection>;
export type RewardSettings = z.output<typeof rewardSection>;

declare module '@drmas/core' {
  interface ConfigSections {
    /** Which orchestra runs, and settings its blocks read. */
    orchestra?: z.input<typeof orchestraSection>;
    /** Episodes per training step. */
    rollout?: z.input<typeof rolloutSection>;
    /** How episode outcomes become turn rewards. */
    reward?: z.input<typeof rewardSection>;
  }
}
