import { DrmasError, type ResolvedConfig } from '@drmas/core';
import type { RoleSwapSettings } from '../config/trainingConfig.js';
import { planWorkerGroups } from '../workerGroupPlan.js';

/** Whether the two roles play on each other's models at training step `step` (1-based): every other `swapEvery` steps. */
export function swappedAt(step: number, swapEvery: number): boolean {
  return Math.floor((step - 1) / swapEvery) % 2 === 1;
}

/** The models of the two roles of `trainer.roleSwap`, in the roles' order; a DrmasError when the swap cannot hold. */
export function roleSwapModels(config: ResolvedConfig, settings: RoleSwapSettings): [string, string] {
  const key = 'trainer.roleSwap.roles';
  const [first, second] = settings.roles;
  if (first === second) {
    throw new DrmasError('CONFIG_INVALID', `trainer.roleSwap names role "${first}" twice`, { key, hint: 'name two different roles' });
  }
  const plans = planWorkerGroups(config);
  const models = settings.roles.map((role) => {
    const plan = plans.find((p) => p.agents.includes(role));
    if (!plan) {
      throw new DrmasError('CONFIG_INVALID', `trainer.roleSwap names role "${role}", which is not under \`agents\``, {
        key,
        hint: `name two of the roles ${Object.keys(config.agents).join(', ')}`,
      });
    }
    if (plan.agents.length > 1) {
      throw new DrmasError(
        'CONFIG_INVALID',
        `role "${role}" shares model "${plan.id}" with ${plan.agents.filter((a) => a !== role).join(', ')}`,
        {
          key: `agents.${role}.model`,
          hint: 'a role swap exchanges two models between two roles: give each of the two roles a model of its own (the same checkpoint twice)',
        },
      );
    }
    if (plan.frozenAgents.length) {
      throw new DrmasError('CONFIG_INVALID', `role "${role}" is frozen (trainable: false), but a swap trains its model in the other role`, {
        key: `agents.${role}.trainable`,
        hint: 'remove trainable: false, or remove trainer.roleSwap',
      });
    }
    return plan.id;
  });
  return [models[0]!, models[1]!];
}
