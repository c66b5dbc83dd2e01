import {
  AdvantageEstimator,
  AUTO_BACKEND,
  BackendFactory,
  DrmasError,
  rankedTrainingEngines,
  type Kernel,
  type ResolvedConfig,
} from '@drmas/core';
import { criticSettings } from '../config/criticConfig.js';
import type { Critics } from './Critics.js';
import { planCritics } from './criticPlan.js';
import { planWorkerGroups } from '../workerGroupPlan.js';

/** The roles whose estimator (`agents.<role>.advantage`, else `algorithm.advantage`) reads critic values. */
function valueRoles(kernel: Kernel, config: ResolvedConfig): Set<string> {
  const roles = new Set<string>();
  for (const [role, entry] of Object.entries(config.agents)) {
    const name = entry.advantage ?? config.algorithm.advantage;
    if (name === undefined) continue;
    const key = entry.advantage ? `agents.${role}.advantage` : 'algorithm.advantage';
    if (kernel.getNamed(AdvantageEstimator, name, key).inputs?.includes('values')) roles.add(role);
  }
  return roles;
}

/** Refuses a critic no estimator reads, and one on an engine that has none; plans the critics. */
export function checkCritics(kernel: Kernel, config: ResolvedConfig, critics: Critics): void {
  const learner = criticSettings(config).learner;
  if (learner === undefined) return;
  const plans = planCritics(config, valueRoles(kernel, config));
  if (plans.length === 0) {
    throw new DrmasError('CONFIG_INVALID', `critic.learner is "${learner}" but no estimator of this config reads critic values`, {
      key: 'critic.learner',
      hint: 'set algorithm.advantage (or agents.<role>.advantage) to gae, or remove critic.learner',
    });
  }
  const loraGroups = new Map(planWorkerGroups(config).flatMap((group) => (group.lora ? [[group.id, group.agents[0]!]] : [])));
  for (const plan of plans) {
    // A critic is made on its policy's training engine (onnx for an adapter, which has no critics) and would take
    // after the base, not the agent's adapter.
    const loraAgent = loraGroups.get(plan.policyGroup);
    if (loraAgent !== undefined) {
      throw new DrmasError(
        'CONFIG_INVALID',
        `critic.learner is "${learner}", but agent "${loraAgent}", whose turns critic ${plan.id} values, trains a LoRA adapter (agents.${loraAgent}.lora): no engine trains both`,
        {
          key: 'critic.learner',
          hint: `remove agents.${loraAgent}.lora (train the full model, on tfjs for its critic), or use a critic-free estimator (algorithm.advantage: grpo, drmas, ...) and remove critic.learner`,
        },
      );
    }
    const backend = plan.settings.backend;
    // `auto` picks, at setup, the best available engine that has critics; here one must exist at all.
    const hasCritics =
      backend === AUTO_BACKEND
        ? rankedTrainingEngines(kernel, plan.settings, { critic: true }).length > 0
        : kernel.getNamed(BackendFactory, backend, `models.${plan.policyGroup}.backend`).createCritic !== undefined;
    if (hasCritics) continue;
    const key = `models.${plan.policyGroup}.backend`;
    // An engine with critics that a preset lists as optional (tfjs) is what to install.
    const absent = backend === AUTO_BACKEND ? kernel.absentProviders(BackendFactory)[0] : undefined;
    if (absent) {
      const engines = Object.values(absent.provides).flat().join(', ');
      throw new DrmasError(
        'PLUGIN_NOT_FOUND',
        `model "${plan.policyGroup}" has a critic (critic ${plan.id}), which no installed engine trains; the ${engines} engine of ${absent.packageName} does, and it is not installed`,
        { key, hint: `npm i ${absent.packageName}, or remove critic.learner` },
      );
    }
    throw new DrmasError('CONFIG_INVALID', `the ${backend} engine of model "${plan.policyGroup}" has no critics (critic ${plan.id})`, {
      key,
      hint: `train model ${plan.policyGroup} on tfjs (models.${plan.policyGroup}.backend: tfjs; its rollout may stay on ${backend}), or remove critic.learner`,
    });
  }
  critics.plans = plans;
}
