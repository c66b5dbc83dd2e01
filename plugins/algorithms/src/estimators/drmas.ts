import { broadcastRows } from '../kernels/broadcast.js';
import { groupNormalizedRowAdvantages } from './grpo.js';
import type { EstimatorDefinition } from './types.js';

/**
 * Dr. MAS: the GRPO formula with one baseline per (prompt group, agent); every row is its own sample, so each
 * agent is normalized by its own reward statistics. Other schemes are one `groupKey` away.
 */
export const drmas: EstimatorDefinition = {
  name: 'drmas',
  defaultGroupKey: 'prompt_agent',
  requires: [],
  compute(batch, options) {
    const rowAdvantages = groupNormalizedRowAdvantages(batch, options, false);
    const advantages = broadcastRows(rowAdvantages, batch.responseMask, batch.rows, batch.cols);
    return { advantages, returns: advantages };
  },
};
