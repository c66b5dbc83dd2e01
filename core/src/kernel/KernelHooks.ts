import { AsyncSeriesBailHook, AsyncSeriesHook, AsyncSeriesWaterfallHook, SyncHook, SyncWaterfallHook } from 'tapable';
import type { ResolvedConfig } from '../config/ResolvedConfig.js';
import type { EvalContext, RunContext, StepContext, StepResult } from '../data/StepContext.js';
import type { RolloutBatch } from '../data/Turn.js';
import type { WorkerGroupBatch } from '../data/BatchView.js';
import type { TrainingBatch } from '../data/TrainingBatch.js';

/** Every hook of the kernel, in the order a run calls them; the argument names are those tapable reports. */
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
    /** Exactly one producer of trajectories (the orchestra runner): the first tap returning a batch wins. */
    rollout: new AsyncSeriesBailHook<[StepContext], RolloutBatch>(['step']),
    /** Filters: dynamic sampling, dedupe, truncation. */
    afterRollout: new AsyncSeriesWaterfallHook<[RolloutBatch, StepContext]>(['batch', 'step']),
    /** Scorers and reward allocators fill per-turn rewards. */
    reward: new AsyncSeriesWaterfallHook<[RolloutBatch, StepContext]>(['batch', 'step']),
    /** The estimator fills the batch's advantages (and returns), in place: the batch is packed once, after `reward`. */
    advantage: new AsyncSeriesHook<[TrainingBatch, StepContext]>(['batch', 'step']),
    /** Called once per worker group with a view of its rows: optimizer steps, then weight sync. */
    update: new AsyncSeriesHook<[WorkerGroupBatch, StepContext]>(['batch', 'step']),
    /** Metrics, checkpoints, evaluation triggers. */
    afterStep: new AsyncSeriesHook<[StepResult]>(['result']),
    /** Validation runs (avg@k, pass@k). */
    evaluate: new AsyncSeriesHook<[EvalContext]>(['evaluation']),
    /** A run failed; synchronous so it runs even while the process is going down. */
    failed: new SyncHook<[Error]>(['error']),
    /** Release resources; always called at the end of a run. */
    shutdown: new AsyncSeriesHook<[]>([]),
  });
}

export type KernelHooks = ReturnType<typeof createKernelHooks>;
export type HookName = keyof KernelHooks;

/** Hook names in call order. */
export const HOOK_NAMES = Object.freeze(Object.keys(createKernelHooks()) as HookName[]);
