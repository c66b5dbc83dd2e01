import { Stage, type ApplyContext } from '@drmas/core';
import type { TrainerConfig } from '../config/trainerSchema.js';
import { batchMetrics } from '../stepMetrics.js';
import type { TrainerBuiltin } from './TrainerBuiltin.js';

const PLUGIN_NAME = 'trainer:step-metrics';

/** The step's episode, outcome, reward and per-agent statistics and its wall time, first thing after the step. */
export class StepMetricsPlugin implements TrainerBuiltin {
  readonly name = PLUGIN_NAME;
  private stepStarted = 0;

  apply(kernel: ApplyContext<TrainerConfig>): void {
    kernel.hooks.beforeStep.tap({ name: PLUGIN_NAME, stage: Stage.FIRST }, () => {
      this.stepStarted = performance.now();
    });
    // First, so that every other afterStep tap (a user's at the default stage included) reads the batch statistics.
    kernel.hooks.afterStep.tap({ name: PLUGIN_NAME, stage: Stage.FIRST }, (result) => {
      Object.assign(result.metrics, batchMetrics(result.batch, (performance.now() - this.stepStarted) / 1000));
    });
  }
}
