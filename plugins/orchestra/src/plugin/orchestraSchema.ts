import type { PluginConfig } from '@drmas/core';
import { agentEntrySchema } from '../agents/agentConfig.js';
import { evalSection } from '../evaluation/EvaluationTaps.js';
import { orchestraSection, rewardSection, rolloutSection } from './orchestraConfig.js';

/** The config sections the orchestra plugin declares (its `configSchema`). */
export const orchestraSchema = {
  orchestra: orchestraSection,
  rollout: rolloutSection,
  reward: rewardSection,
  agents: agentEntrySchema,
  eval: evalSection,
};

/** The run's config as the orchestra reads it: its sections typed from `orchestraSchema`. */
export type OrchestraConfig = PluginConfig<typeof orchestraSchema>;
