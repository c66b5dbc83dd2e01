import type { ApplyContext, WorkerGroupBatch } from '@drmas/core';
import type { TrainerConfig } from '../config/trainerSchema.js';
import { updateWorkerGroup } from '../updateWorkerGroup.js';
import type { WorkerGroupsService } from '../WorkerGroupsService.js';
import type { OnlineDpoPairing } from './OnlineDpoPairing.js';
import type { TrainerBuiltin } from './TrainerBuiltin.js';
import { WorkerGroupUpdates } from './WorkerGroupUpdates.js';

const PLUGIN_NAME = 'trainer:policy-update';

/** The group's rows less those of frozen agents (`trainable: false`), which never reach the loss. */
function withoutFrozenRows(view: WorkerGroupBatch, frozen: readonly string[]): WorkerGroupBatch {
  if (frozen.length === 0) return view;
  const { names, codes } = view.batch.ids.agent;
  const rows = view.rows.filter((row) => !frozen.includes(names[codes[row]!]!));
  return { ...view, rows, agentIds: view.agentIds.filter((agent) => !frozen.includes(agent)) };
}

/**
 * Taps `update`: each worker group, as the kernel hands it, trains on its rows (less its frozen agents') with the
 * run's loss; a loss that trains on pairs of rows (online DPO) gets the pairs `pairing` makes of the group's rollouts.
 */
export class PolicyUpdatePlugin implements TrainerBuiltin {
  readonly name = PLUGIN_NAME;

  constructor(
    private readonly groups: () => WorkerGroupsService,
    private readonly updates: (kernel: ApplyContext<TrainerConfig>) => WorkerGroupUpdates,
    private readonly pairing: OnlineDpoPairing,
  ) {}

  apply(kernel: ApplyContext<TrainerConfig>): void {
    const updates = this.updates(kernel);
    kernel.hooks.update.tapPromise(PLUGIN_NAME, async (view, step) => {
      const group = this.groups().get(view.workerGroupId);
      const trained = withoutFrozenRows(view, group.frozenAgents);
      if (group.frozenAgents.length) step.metrics[`actor/${group.id}/frozen_rows`] = view.rows.length - trained.rows.length;
      if (trained.rows.length === 0) return;
      const loss = updates.loss();
      const rows = loss.pairedRows ? this.pairing.pairs(trained, group, step) : trained;
      if (!rows) return;
      await updateWorkerGroup(group, rows, { ...updates.options(group, step, group.id, view.batch), loss });
    });
  }
}
