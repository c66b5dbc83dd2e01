import {
  AUTO_BACKEND,
  BackendFactory,
  DrmasError,
  rolesReadingValues,
  type Engines,
  type ApplyContext,
  type ResolvedConfig,
} from '@drmas/core';
import { criticSettings } from '../config/criticConfig.js';
import type { Critics } from './Critics.js';
import { CriticLearner } from './CriticLearner.js';
import { planCritics } from './criticPlan.js';

/** Refuses a critic no estimator reads, and one on an engine that has none; plans the critics. */
export function checkCritics(kernel: ApplyContext, engines: Engines, config: ResolvedConfig, critics: Critics): void {
  const learner = criticSettings(config).learner;
  if (learner === undefined) return;
  const plans = planCritics(config, rolesReadingValues(kernel, config), kernel.getNamed(CriticLearner, learner, 'critic.learner'));
  if (plans.length === 0) {
    throw new DrmasError('CONFIG_INVALID', `critic.learner is "${learner}" but no estimator of this config reads critic values`, {
      key: 'critic.learner',
      hint: 'set algorithm.advantage (or agents.<role>.advantage) to gae, or remove critic.learner',
    });
  }
  const trainsCritics = (name: string) => engines.get(name, 'models.<id>.backend').capabilities.includes('critic');
  for (const plan of plans) {
    const backend = plan.settings.backend;
    const key = `models.${plan.policyGroup}.backend`;
    // `auto` picks, at setup, the best available engine that has critics; here one must exist at all.
    const hasCritics =
      backend === AUTO_BACKEND
        ? engines.ranked({ needs: ['train', 'critic'], settings: plan.settings }).length > 0
        : engines.get(backend, key).capabilities.includes('critic');
    if (hasCritics) continue;
    // An engine with critics that a preset lists as optional (tfjs) is what to install.
    const absent = backend === AUTO_BACKEND ? kernel.absentProviders(BackendFactory)[0] : undefined;
    if (absent) {
      const provided = Object.values(absent.provides).flat().join(', ');
      throw new DrmasError(
        'PLUGIN_NOT_FOUND',
        `model "${plan.policyGroup}" has a critic (critic ${plan.id}), which no installed engine trains; the ${provided} engine of ${absent.packageName} does, and it is not installed`,
        { key, hint: `npm i ${absent.packageName}, or remove critic.learner` },
      );
    }
    const withCritics = engines.names().filter(trainsCritics);
    const choices = withCritics.length ? withCritics.join(' or ') : 'an engine with critics (plugins: backend-onnx or backend-tfjs)';
    throw new DrmasError('CONFIG_INVALID', `the ${backend} engine of model "${plan.policyGroup}" has no critics (critic ${plan.id})`, {
      key,
      hint: `train model ${plan.policyGroup} on ${choices} (models.${plan.policyGroup}.backend; its rollout may stay on ${backend}), or remove critic.learner`,
    });
  }
  critics.plans = plans;
}
