import { AsyncSeriesBailHook, AsyncSeriesHook, AsyncSeriesWaterfallHook, SyncHook, SyncWaterfallHook } from 'tapable';
import type { ResolvedConfig } from '../config/ResolvedConfig.js';
import type { EvalContext, RunContext, StepContext, StepResult } from '../data/StepContext.js';
import type { RolloutBatch } from '../data/Turn.js';
import type { WorkerGroupBatch } from '../data/BatchView.js';
import type { TrainingBatch } from '../data/TrainingBatch.js';
import type { RerunRequest } from '../services/Rollouts.js';

/** Where a run failed: in `setup`, or in a step or an evaluation after it. */
export type FailedIn = 'setup' | 'run';

/** Every hook of the kernel, in the order a run calls them (`rerun` when asked for); the argument names are those tapable reports. */
export function createKernelHooks() {
  return Object.freeze({
    /** Plugins amend the merged config; each tap returns the (possibly new) config. */
    configure: new SyncWaterfallHook<[ResolvedConfig]>(['config']),
    /** Each plugin checks its own options; throw a DrmasError naming the key. */
    validate: new SyncHook<[ResolvedConfig]>(['config']),
    /** Async initialisation by stage: backends, models, environments. */
    setup: new AsyncSeriesHook<[RunContext]>(['run']),
    /** Schedules and curricula, once per step before sampling. */
    beforeStep: new AsyncSeriesHook<[StepContext]>(['step']),
    /**
     * Exactly one producer of trajectories (the orchestra runner): the first tap returning a batch wins. Called by the
     * kernel's `Rollouts` (`next`): once per step, and again for each further round a plugin asks for.
     */
    rollout: new AsyncSeriesBailHook<[StepContext], RolloutBatch>(['step']),
    /**
     * Episodes of tasks the step's rollout drew, run again as the request says (ReMax's greedy baselines): the first tap
     * returning a batch wins. Called by the kernel's `Rollouts` (`rerun`), when a plugin asks for them.
     */
    rerun: new AsyncSeriesBailHook<[RerunRequest, StepContext], RolloutBatch>(['request', 'step']),
    /** Filters: dynamic sampling, dedupe, truncation. */
    afterRollout: new AsyncSeriesWaterfallHook<[RolloutBatch, StepContext]>(['batch', 'step']),
    /** Scorers and reward allocators fill per-turn rewards. */
    reward: new AsyncSeriesWaterfallHook<[RolloutBatch, StepContext]>(['batch', 'step']),
    /** The estimator fills the batch's advantages (and returns), in place: the batch is packed once, after `reward`. */
    advantage: new AsyncSeriesHook<[TrainingBatch, StepContext]>(['batch', 'step']),
    /**
     * The whole update phase, for the one plugin that orders it across worker groups itself (HAPPO's roles updated one
     * after another): a tap returning true has updated every group, and `update` is not called in this step.
     */
    updatePhase: new AsyncSeriesBailHook<[TrainingBatch, StepContext], true | undefined>(['batch', 'step']),
    /** Called once per worker group with a view of its rows: optimizer steps, then weight sync. */
    update: new AsyncSeriesHook<[WorkerGroupBatch, StepContext]>(['batch', 'step']),
    /** Metrics, checkpoints, evaluation triggers. */
    afterStep: new AsyncSeriesHook<[StepResult]>(['result']),
    /** Validation runs (avg@k, pass@k). */
    evaluate: new AsyncSeriesHook<[EvalContext]>(['evaluation']),
    /**
     * A run failed: in `setup` (nothing is shut down then: the run-directory plugin lets its folder go) or after it
     * (`shutdown` follows); synchronous so it runs even while the process is going down.
     */
    failed: new SyncHook<[Error, FailedIn]>(['error', 'phase']),
    /** Release resources; always called at the end of a run. */
    shutdown: new AsyncSeriesHook<[]>([]),
  });
}

export type KernelHooks = ReturnType<typeof createKernelHooks>;
export type HookName = keyof KernelHooks;

/** A tap as tapable hands it to an interceptor's `register` (its name, type, stage, `before`, and function). */
export type RegisteredTap = Parameters<NonNullable<Parameters<KernelHooks['validate']['intercept']>[0]['register']>>[0];

/** What interceptors need of any kernel hook: tapable's public `intercept`. */
export interface InterceptableHook {
  intercept(interceptor: { register(tap: RegisteredTap): RegisteredTap }): void;
}

/** Hook names in call order. */
export const HOOK_NAMES = Object.freeze(Object.keys(createKernelHooks()) as HookName[]);
