import { groupNormalized } from './grpo.js';
import type { EstimatorDefinition } from './types.js';

/**
 * Dr. MAS: the GRPO formula with one baseline per (prompt group, agent) and every turn its own sample, so each agent
 * is normalized by its own reward statistics. `grpo` differs only in its two defaults (`prompt`, `trajectory`); each
 * is one option away (`groupKey`, `statisticsUnit`).
 */
export const drmas: EstimatorDefinition = {
  name: 'drmas',
  defaultGroupKey: 'prompt_agent',
  defaultStatisticsUnit: 'turn',
  requires: [],
  compute: groupNormalized,
};
