import type { Container } from 'inversify';
import type { ResolvedConfig } from '../config/ResolvedConfig.js';
import type { MemoryBudget } from '../run/memoryBudget.js';
import type { TrainingBatch } from './TrainingBatch.js';
import type { RolloutBatch } from './Turn.js';

/** A mutable bag of metrics: `name -> value`; names use `/` to nest (`actor/solver/grad_norm`). */
export type Metrics = Record<string, number>;

/**
 * Values of one quantity within a step, kept whole for sinks that draw their distribution (a histogram of the
 * gradient norms of every optimizer step, say); `name -> values`, named as metrics are.
 */
export type Distributions = Record<string, number[]>;

/** What every hook of a run can reach. */
export interface RunContext {
  config: ResolvedConfig;
  container: Container;
  /** Absolute path of the run directory (created before `setup`). */
  runDir: string;
  /** The option or config key that chose `runDir` (`--run-dir`, `trainer.outputDir`, ...), for messages. */
  runDirKey?: string;
  /** The checkpoint folder a resumed run restores from (set by `drmas train --resume`). */
  resumeFrom?: string;
  /** Aborted when the run is asked to stop (SIGINT); long work should check it. */
  signal: AbortSignal;
  /**
   * `trainer.memoryBudget` as the memory check read it (`resolveMemoryBudget`): what engines size their work by (the
   * onnx engine's default micro-batch at large sizes).
   */
  memoryBudget: MemoryBudget;
  log(message: string): void;
}

export interface StepContext {
  run: RunContext;
  /** 1-based step number. */
  step: number;
  /** Metrics of this step; any tap may add to it. */
  metrics: Metrics;
  /** Whole distributions of this step (per-update gradient norms, ...); any tap may add to it. */
  distributions: Distributions;
}

export interface StepResult {
  step: number;
  /** The episodes as the `reward` hook left them. */
  rollout: RolloutBatch;
  /** The same turns packed for training, with the estimator's advantages and the trainer's log-probs. */
  batch: TrainingBatch;
  metrics: Metrics;
  context: StepContext;
}

export interface EvalContext {
  run: RunContext;
  /** The training step after which evaluation runs (0 for an eval-only run). */
  step: number;
  metrics: Metrics;
}
