import { Checkpointable, type RegisterContext } from '@drmas/core';
import type { TrainerConfig } from '../config/trainerSchema.js';
import type { SpikeGuards } from '../spikeGuard/GradNormSpikeGuard.js';
import type { TrainerBuiltin } from './TrainerBuiltin.js';

/**
 * The gradient-norm spike guards of the models that set `spikeGuard`: each worker group's update consults its model's
 * guard (`WorkerGroupUpdates`), and their windows go into checkpoints, so a resumed run judges spikes as before.
 */
export class SpikeGuardPlugin implements TrainerBuiltin {
  readonly name = 'trainer:spike-guard';

  constructor(private readonly guards: SpikeGuards) {}

  register(ctx: RegisterContext<TrainerConfig>): void {
    ctx.bind(Checkpointable).toConstantValue(this.guards);
  }
}
