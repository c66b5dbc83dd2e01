import type { ApplyContext } from '@drmas/core';
import type { TrainerConfig } from '../config/trainerSchema.js';
import type { SpikeGuardSettings } from '../config/trainingConfig.js';
import type { Critics } from '../critic/Critics.js';
import { SpikeGuards } from '../spikeGuard/GradNormSpikeGuard.js';
import type { WorkerGroupsService } from '../WorkerGroupsService.js';
import { CheckpointsPlugin } from './CheckpointsPlugin.js';
import { CriticsPlugin } from './CriticsPlugin.js';
import { HappoUpdatePlugin } from './HappoUpdatePlugin.js';
import { OnlineDpoPairing } from './OnlineDpoPairing.js';
import { PolicyUpdatePlugin } from './PolicyUpdatePlugin.js';
import { RoleSwapPlugin } from './RoleSwapPlugin.js';
import { RolloutLogPlugin } from './RolloutLogPlugin.js';
import { SpikeGuardPlugin } from './SpikeGuardPlugin.js';
import { StepMetricsPlugin } from './StepMetricsPlugin.js';
import type { TrainerBuiltin } from './TrainerBuiltin.js';
import { WorkerGroupUpdates } from './WorkerGroupUpdates.js';

/** What the trainer's built-in plugins share: the run's worker groups and its critics. */
export interface TrainerParts {
  readonly groups: () => WorkerGroupsService;
  readonly critics: Critics;
}

/** The built-ins a config asks for, and the checkpoints one (which the trainer flushes at shutdown). */
export interface TrainerBuiltins {
  readonly plugins: readonly TrainerBuiltin[];
  readonly checkpoints: CheckpointsPlugin;
}

/**
 * The trainer's features as built-in plugins chosen from the config, webpack's `WebpackOptionsApply` way: critics
 * when `critic.learner` is set (and HAPPO's sequential update phase with them), the spike guards of the models that
 * set `spikeGuard`, CORY's role swap when `trainer.roleSwap` is set; the policy update, rollouts.jsonl, checkpoints
 * and step metrics always. The order is the order each hook calls them in (critics before HAPPO at `validate`;
 * checkpoints, then the step timer, then the role swap at `beforeStep`; rollouts.jsonl before checkpoints at
 * `afterStep`).
 */
export function trainerBuiltins(config: TrainerConfig, parts: TrainerParts): TrainerBuiltins {
  const guarded = Object.entries(config.models).filter(([, model]) => model.spikeGuard !== undefined);
  const spikeGuards = guarded.length
    ? new SpikeGuards(new Map(guarded.map(([id, model]) => [id, model.spikeGuard as SpikeGuardSettings])))
    : undefined;
  const updates = (kernel: ApplyContext<TrainerConfig>) => new WorkerGroupUpdates(kernel, spikeGuards);
  const checkpoints = new CheckpointsPlugin(parts.groups, parts.critics);
  const chosen: Array<TrainerBuiltin | false | undefined> = [
    config.critic.learner !== undefined && new CriticsPlugin(parts.critics, parts.groups),
    config.critic.learner !== undefined && new HappoUpdatePlugin(parts.critics, parts.groups, updates),
    new PolicyUpdatePlugin(parts.groups, updates, new OnlineDpoPairing()),
    spikeGuards && new SpikeGuardPlugin(spikeGuards),
    new RolloutLogPlugin(),
    checkpoints,
    new StepMetricsPlugin(),
    config.trainer.roleSwap !== undefined && new RoleSwapPlugin(parts.groups),
  ];
  return { plugins: chosen.filter((plugin): plugin is TrainerBuiltin => plugin !== false && plugin !== undefined), checkpoints };
}
