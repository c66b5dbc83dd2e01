import { configJsonFor, loadModelWeights, saveCheckpoint } from '@drmas/models';
import type { DecoderSessions } from '../DecoderSessions.js';
import type { PolicyTraining } from '../training/PolicyTraining.js';
import { graphShape, type WeightState } from '../weights/WeightState.js';
import type { WeightSync } from '../weights/WeightSync.js';
import type { CheckpointIO, LoadOptions, SaveOptions } from './CheckpointIO.js';

/** A Hugging Face checkpoint folder of the whole model, with AdamW's state in the tfjs backend's files. */
export class ModelCheckpoint implements CheckpointIO {
  constructor(
    private readonly state: WeightState,
    private readonly sessions: DecoderSessions,
    private readonly training: PolicyTraining,
    private readonly weightSync: WeightSync,
  ) {}

  /** Writes the current weights, with AdamW's state unless `optimizer: false`. */
  async save(dir: string, options: SaveOptions): Promise<void> {
    const bf16 = options.dtype === 'bfloat16';
    const extraFiles = (options.optimizer ?? true) ? await this.training.optimizerFiles() : undefined;
    const { state } = this;
    await saveCheckpoint(dir, {
      config: { ...configJsonFor(state.config), ...(bf16 ? { torch_dtype: 'bfloat16' } : {}) },
      tensors: state.weights,
      dtype: bf16 ? 'BF16' : 'F32',
      tokenizer: state.tokenizer,
      extraFiles,
    });
  }

  /**
   * Takes the weights (and tokenizer) of a checkpoint; graphs are rebuilt only when the model's shape changed.
   * Optimizer state (written by either backend) is loaded when asked, or by default when the folder has it;
   * otherwise the optimizer restarts.
   */
  async load(dir: string, options: LoadOptions): Promise<void> {
    const { state } = this;
    const loaded = await loadModelWeights({ model: dir });
    if (loaded.tokenizer) state.tokenizer = loaded.tokenizer;
    if (JSON.stringify(graphShape(loaded.config)) !== JSON.stringify(graphShape(state.config))) {
      await this.sessions.release();
      await this.training.release();
      state.reshape(loaded.config);
      this.sessions.reshaped();
    }
    await this.weightSync.replace(loaded.weights);
    await this.training.loadOptimizer(dir, options.optimizer);
  }
}
