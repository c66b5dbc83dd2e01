import path from 'node:path';
import { RunFile, Stage, type ApplyContext, type RegisterContext } from '@drmas/core';
import type { TrainerConfig } from '../config/trainerSchema.js';
import { appendRollouts } from '../RolloutLog.js';
import type { TrainerBuiltin } from './TrainerBuiltin.js';

const PLUGIN_NAME = 'trainer:rollout-log';

/** `rollouts.jsonl`: the first `trainer.logRollouts` turns of every step's batch, after the step. */
export class RolloutLogPlugin implements TrainerBuiltin {
  readonly name = PLUGIN_NAME;

  register(ctx: RegisterContext<TrainerConfig>): void {
    ctx.bind(RunFile).toConstantValue({ path: 'rollouts.jsonl', kind: 'steps' });
  }

  apply(kernel: ApplyContext<TrainerConfig>): void {
    kernel.hooks.afterStep.tap({ name: PLUGIN_NAME, stage: Stage.REPORT }, (result) => {
      const { logRollouts } = kernel.config.trainer;
      if (logRollouts > 0) appendRollouts(path.join(result.context.run.runDir, 'rollouts.jsonl'), result.step, result.batch, logRollouts);
    });
  }
}
