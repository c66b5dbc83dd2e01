import { Stage, type ApplyContext } from '@drmas/core';
import type { TrainerConfig } from '../config/trainerSchema.js';
import { roleSwapModels, swappedAt } from '../roleSwap/roleSwap.js';
import type { WorkerGroupsService } from '../WorkerGroupsService.js';
import type { TrainerBuiltin } from './TrainerBuiltin.js';

const PLUGIN_NAME = 'trainer:role-swap';

/**
 * CORY's role exchange (`trainer.roleSwap`): every `swapEvery` steps the two roles trade the models they play on,
 * before the step samples; the step's metrics say whether they are swapped (`roleSwap/swapped`).
 */
export class RoleSwapPlugin implements TrainerBuiltin {
  readonly name = PLUGIN_NAME;

  constructor(private readonly groups: () => WorkerGroupsService) {}

  apply(kernel: ApplyContext<TrainerConfig>): void {
    kernel.hooks.validate.tap(PLUGIN_NAME, () => {
      const swap = kernel.config.trainer.roleSwap;
      if (swap) roleSwapModels(kernel.config, swap);
    });
    kernel.hooks.beforeStep.tap({ name: PLUGIN_NAME, stage: Stage.FIRST }, (step) => {
      const swap = kernel.config.trainer.roleSwap;
      if (!swap) return;
      // A function of the step alone, so a resumed run plays each role on the model the uninterrupted run would.
      const swapped = swappedAt(step.step, swap.swapEvery);
      this.groups().swapRoles(swap.roles, swapped);
      step.metrics['roleSwap/swapped'] = swapped ? 1 : 0;
      if (step.step > 1 && swapped !== swappedAt(step.step - 1, swap.swapEvery)) {
        const [a, b] = swap.roles;
        const [modelA, modelB] = roleSwapModels(kernel.config, swap);
        step.run.log(
          `step ${step.step}: ${a} now plays on model ${swapped ? modelB : modelA} and ${b} on model ${swapped ? modelA : modelB} (trainer.roleSwap)`,
        );
      }
    });
  }
}
