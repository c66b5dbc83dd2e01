import type { PolicyBackend, WeightTensor } from '@drmas/core';
import type { DecoderSessions } from '../DecoderSessions.js';
import type { PolicyTraining } from '../training/PolicyTraining.js';
import { checkedWeights, type WeightState } from './WeightState.js';

/** New weight values for an engine: another engine's (`syncWeights`) or a checkpoint's. */
export class WeightSync {
  constructor(
    private readonly state: WeightState,
    private readonly sessions: DecoderSessions,
    private readonly training: PolicyTraining,
  ) {}

  /**
   * Takes `from`'s current weights. With weights as graph inputs (the default) this swaps the host buffers the sessions
   * read on their next run: no file, no session rebuild.
   */
  async syncFrom(from: PolicyBackend): Promise<void> {
    await this.replace(await from.exportWeights());
  }

  /**
   * New weight values. Once a trainer shares the weights, they are copied into its buffers (it keeps training them, with
   * its optimizer state, as the tfjs backend's `assignTensors`); before, the engine takes `weights` in place.
   */
  async replace(weights: Map<string, WeightTensor>): Promise<void> {
    const checked = checkedWeights(this.state.config, weights);
    if (this.training.started) {
      this.state.copyFrom(checked);
      await this.sessions.weightsChanged();
      return;
    }
    this.state.adopt(checked);
    if (this.state.weightMode === 'initializers') await this.sessions.release();
  }
}
