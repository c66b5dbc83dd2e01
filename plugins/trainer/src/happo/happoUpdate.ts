import type { Metrics, TrainingBatch, WorkerGroupBatch } from '@drmas/core';
import type { HappoSettings } from '../config/criticConfig.js';
import { scoreInto, updateWorkerGroup, type WorkerGroupUpdate } from '../updateWorkerGroup.js';
import type { TrainedWorkerGroup } from '../WorkerGroupsService.js';
import { HappoFactor } from './HappoFactor.js';

/** The rows of `role` in `batch`, as the view its worker group trains on. */
function roleView(batch: TrainingBatch, role: string, groupId: string): WorkerGroupBatch {
  const { names, codes } = batch.ids.agent;
  const rows: number[] = [];
  for (let r = 0; r < batch.rows; r++) if (names[codes[r]!] === role) rows.push(r);
  return { batch, rows: Int32Array.from(rows), workerGroupId: groupId, agentIds: [role] };
}

export interface HappoStep {
  /** The roles to update, in order (`happoOrderAt`). */
  order: readonly string[];
  settings: HappoSettings;
  groupOf: (role: string) => TrainedWorkerGroup;
  metrics: Metrics;
  /** The update options of a role's sub-step (its loss, rng, schedule, spike guard; `metrics` is the step's). */
  updateOptions: (group: TrainedWorkerGroup, role: string) => WorkerGroupUpdate;
  oldLogProbs: 'recompute' | 'rollout';
}

/**
 * HAPPO's sequential update of one training step. With `oldLogProbs: recompute`, every role's rows are scored first
 * (the weights that sampled them: on a shared model a later role's PPO denominator is not moved by an earlier role's
 * sub-step). Then each role in order: its advantages multiplied by M (`HappoFactor`), its worker group updated on its
 * rows alone (`updateWorkerGroup`), the estimator's advantages put back, and, unless it is the last, its turns scored
 * again with the updated weights so that its ratios join M for the roles after it. Metrics: `happo/<role>/position`
 * (0-based) and M's token mean, min, max and clip fraction; a role's actor metrics under `actor/<group>` when it has
 * its group to itself, else `actor/<group>/<role>`.
 */
export async function happoUpdate(batch: TrainingBatch, step: HappoStep): Promise<void> {
  const views = step.order.map((role) => {
    const group = step.groupOf(role);
    return { role, group, view: roleView(batch, role, group.id) };
  });
  const prescore = step.oldLogProbs === 'recompute';
  if (prescore) {
    batch.oldLogProbs ??= Float32Array.from(batch.rolloutLogProbs);
    for (const { role, group, view } of views) {
      const entropy = await scoreInto(group.trainer, view, batch.oldLogProbs, true);
      if (entropy !== undefined) step.metrics[`happo/${role}/entropy`] = entropy;
    }
  }
  const factor = new HappoFactor(batch, step.settings);
  const scratch = new Float32Array(batch.rows * batch.responseLength);
  for (const [position, { role, group, view }] of views.entries()) {
    const options = step.updateOptions(group, role);
    const shared = group.agents.filter((agent) => !group.frozenAgents.includes(agent)).length > 1;
    const m = factor.scale(view);
    try {
      await updateWorkerGroup(group, view, {
        ...options,
        metrics: step.metrics,
        oldLogProbs: step.oldLogProbs,
        oldLogProbsScored: prescore,
        metricsId: shared ? `${group.id}/${role}` : group.id,
      });
    } finally {
      m.restore();
    }
    const prefix = `happo/${role}`;
    Object.assign(step.metrics, {
      [`${prefix}/position`]: position,
      [`${prefix}/factor_mean`]: m.mean,
      [`${prefix}/factor_min`]: m.min,
      [`${prefix}/factor_max`]: m.max,
      [`${prefix}/factor_clipfrac`]: m.clipped,
    });
    if (position === views.length - 1) break;
    await scoreInto(group.trainer, view, scratch, false);
    factor.multiply(view, scratch, batch.oldLogProbs ?? batch.rolloutLogProbs);
  }
}
