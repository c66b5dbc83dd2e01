import { DrmasError, type OptimizerSettings, type ResolvedConfig } from '@drmas/core';
import { criticSettings, type CriticLearnerName, type CriticSettings } from '../config/criticConfig.js';
import type { CriticLearner } from './CriticLearner.js';
import { planWorkerGroups } from '../workerGroupPlan.js';

/** The id of MAPPO's one centralized critic. */
export const JOINT_CRITIC_ID = 'joint';

/** What one critic will be: the agents whose turns it values, its trunk's settings, and how it trains. */
export interface CriticPlan {
  id: string;
  learner: CriticLearnerName;
  /** What the learner does (its critics, policy update and credit). */
  kind: CriticLearner;
  /** The roles whose rows it values and learns from. */
  agents: string[];
  /** The worker group whose policy model (settings, backend, trunk when shared) the critic takes after. */
  policyGroup: string;
  /** Model settings of its trunk: the policy model's, with `critic.model` when set. */
  settings: ResolvedConfig['models'][string];
  shareTrunk: boolean;
  /** Reads the episode's joint context (every agent's turns so far) instead of its row's own prompt. */
  joint: boolean;
  training: { optimizer: OptimizerSettings; epochs: number; miniBatches: number; microBatchSize: number };
}

/**
 * The critics the `critic` section asks for, over the roles in `valueRoles` (those whose estimator reads critic
 * values): one per worker group, one per role, or one for all, as `learner` (the one `critic.learner` names) says.
 * Empty when `critic.learner` is unset.
 */
export function planCritics(config: ResolvedConfig, valueRoles: ReadonlySet<string>, learner: CriticLearner | undefined): CriticPlan[] {
  const critic = criticSettings(config);
  if (critic.learner === undefined || learner === undefined) return [];
  const groups = planWorkerGroups(config)
    .map((group) => ({ ...group, agents: group.agents.filter((agent) => valueRoles.has(agent)) }))
    .filter((group) => group.agents.length > 0);
  const plan = (id: string, agents: string[], group: (typeof groups)[number], joint: boolean): CriticPlan => ({
    id,
    learner: critic.learner!,
    kind: learner,
    agents,
    policyGroup: group.id,
    settings: { ...group.settings, ...(critic.model ? { model: critic.model } : {}) },
    shareTrunk: critic.shareTrunk,
    joint,
    training: {
      optimizer: adamW(critic.optimizer),
      epochs: critic.epochs ?? group.training.epochs,
      miniBatches: critic.miniBatches ?? group.training.miniBatches,
      microBatchSize: critic.microBatchSize ?? group.training.microBatchSize,
    },
  });
  switch (learner.critics) {
    case 'group':
      return groups.map((group) => plan(group.id, group.agents, group, false));
    case 'role':
      return groups.flatMap((group) => group.agents.map((agent) => plan(agent, [agent], group, false)));
    case 'joint': {
      if (groups.length === 0) return [];
      if (critic.shareTrunk && groups.length > 1) {
        throw new DrmasError('CONFIG_INVALID', `a centralized critic cannot share the trunk of ${groups.length} policy models`, {
          key: 'critic.shareTrunk',
          hint: `MAPPO's critic serves the worker groups ${groups.map((g) => g.id).join(', ')}: give it a trunk of its own (shareTrunk: false)`,
        });
      }
      return [
        plan(
          JOINT_CRITIC_ID,
          groups.flatMap((group) => group.agents),
          groups[0]!,
          true,
        ),
      ];
    }
  }
}

/** The critic's AdamW settings: its optimizer section without the schedule (which the trainer turns into each step's scale). */
function adamW(optimizer: CriticSettings['optimizer']): OptimizerSettings {
  const { schedule: _schedule, warmupSteps: _warmup, ...adam } = optimizer;
  return { ...adam, paramGroups: [] };
}
