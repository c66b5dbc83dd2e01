import { DrmasError, type ApplyContext } from '@drmas/core';
import type { TrainerConfig } from '../config/trainerSchema.js';
import type { Critics } from '../critic/Critics.js';
import { checkHappoOrder, happoOrderAt, happoRoles } from '../happo/happoOrder.js';
import { happoUpdate } from '../happo/happoUpdate.js';
import type { WorkerGroupsService } from '../WorkerGroupsService.js';
import type { TrainerBuiltin } from './TrainerBuiltin.js';
import type { WorkerGroupUpdates } from './WorkerGroupUpdates.js';

const PLUGIN_NAME = 'trainer:happo';

/**
 * HAPPO's sequential update (`critic.learner` whose learner updates policies in sequence): owns the step's whole
 * update phase (`updatePhase`), updating the roles one after another across worker groups in `critic.happo.order`,
 * each on advantages scaled by the roles updated before it; the kernel then calls no `update`.
 */
export class HappoUpdatePlugin implements TrainerBuiltin {
  readonly name = PLUGIN_NAME;

  constructor(
    private readonly critics: Critics,
    private readonly groups: () => WorkerGroupsService,
    private readonly updates: (kernel: ApplyContext<TrainerConfig>) => WorkerGroupUpdates,
  ) {}

  apply(kernel: ApplyContext<TrainerConfig>): void {
    const sequential = () => this.critics.learner?.policyUpdate === 'sequential';
    kernel.hooks.validate.tap(PLUGIN_NAME, () => {
      if (!sequential()) return;
      const { config } = kernel;
      checkHappoOrder(config.critic.happo, happoRoles(config));
      // A role updated after another on a shared model no longer samples as the batch was sampled.
      if (config.trainer.oldLogProbs === 'current') {
        throw new DrmasError(
          'CONFIG_INVALID',
          "critic.learner happo updates the roles in sequence, which trainer.oldLogProbs 'current' cannot follow",
          {
            key: 'trainer.oldLogProbs',
            hint: "set trainer.oldLogProbs to 'recompute' (the default) or 'rollout': a role updated after another needs the old log-probs scored before any update",
          },
        );
      }
      // Online DPO trains on pairs of rows, which HAPPO's per-role advantages do not weigh.
      if ((config.algorithm as { dpo?: unknown }).dpo !== undefined) {
        throw new DrmasError('CONFIG_INVALID', 'critic.learner happo scales advantages, which online DPO (algorithm.dpo) does not read', {
          key: 'critic.learner',
          hint: 'remove algorithm.dpo to train HAPPO with the PPO loss, or use another critic.learner',
        });
      }
    });
    const updates = this.updates(kernel);
    kernel.hooks.updatePhase.tapPromise(PLUGIN_NAME, async (batch, step) => {
      if (!sequential()) return undefined;
      if (batch.rows === 0) return true;
      const { config } = kernel;
      await happoUpdate(batch, {
        order: happoOrderAt(config.critic.happo, happoRoles(config), config.trainer.seed, step.step),
        settings: config.critic.happo,
        groupOf: (role) => this.groups().forAgent(role),
        metrics: step.metrics,
        updateOptions: (group, role) => updates.options(group, step, role, batch),
        oldLogProbs: config.trainer.oldLogProbs === 'rollout' ? 'rollout' : 'recompute',
      });
      return true;
    });
  }
}
