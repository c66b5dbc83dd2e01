import type { StepContext, WorkerGroupBatch } from '@drmas/core';
import { bestAgainstWorst } from '../preference/onlinePairs.js';
import type { TrainedWorkerGroup } from '../WorkerGroupsService.js';

/**
 * Online DPO's rows (`algorithm.dpo`, a loss with `pairedRows`): a worker group trains on pairs of its own rollouts,
 * best against worst (`bestAgainstWorst`); the step's metrics count the pairs and the ties left out.
 */
export class OnlineDpoPairing {
  /** The pairs' view, or undefined when the group's rollouts make none this step (then it does not update). */
  pairs(view: WorkerGroupBatch, group: TrainedWorkerGroup, step: StepContext): WorkerGroupBatch | undefined {
    const online = bestAgainstWorst(view, group.id);
    step.metrics[`actor/${group.id}/dpo_pairs`] = online.pairs;
    step.metrics[`actor/${group.id}/dpo_ties`] = online.ties;
    return online.view;
  }
}
