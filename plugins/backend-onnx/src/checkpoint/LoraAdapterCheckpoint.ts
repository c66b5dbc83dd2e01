import { DrmasError, type LoraSettings, type WeightTensor } from '@drmas/core';
import { configJsonFor, loadLoraAdapter, loraAdapterFiles, saveCheckpoint } from '@drmas/models';
import type { PolicyTraining } from '../training/PolicyTraining.js';
import type { WeightState } from '../weights/WeightState.js';
import type { CheckpointIO, LoadOptions, SaveOptions } from './CheckpointIO.js';

/**
 * A LoRA adapter's checkpoint folder in PEFT's layout (plus config.json, the tokenizer and the adapter's optimizer
 * state); the frozen base stays where it was loaded from.
 */
export class LoraAdapterCheckpoint implements CheckpointIO {
  constructor(
    private readonly state: WeightState,
    private readonly training: PolicyTraining,
    private readonly lora: { settings: LoraSettings; adapter: Map<string, WeightTensor> },
  ) {}

  async save(dir: string, options: SaveOptions): Promise<void> {
    const extraFiles = (options.optimizer ?? true) ? await this.training.optimizerFiles() : undefined;
    await saveCheckpoint(dir, {
      config: configJsonFor(this.state.config),
      tensors: new Map(),
      tokenizer: this.state.tokenizer,
      extraFiles: { ...extraFiles, ...loraAdapterFiles('', this.lora.settings, this.lora.adapter) },
    });
  }

  /** The adapter saved in `dir` (PEFT's layout, the settings this engine was made with) and its optimizer state. */
  async load(dir: string, options: LoadOptions): Promise<void> {
    const { settings, tensors } = await loadLoraAdapter(dir, this.state.config);
    const own = this.lora.settings;
    const same =
      settings.rank === own.rank &&
      settings.alpha === own.alpha &&
      settings.dropout === own.dropout &&
      settings.targetModules.join() === own.targetModules.join();
    if (!same) {
      const text = (s: LoraSettings) =>
        `r=${s.rank}, lora_alpha=${s.alpha}, lora_dropout=${s.dropout}, target_modules=${s.targetModules.join(',')}`;
      throw new DrmasError(
        'CHECKPOINT_INVALID',
        `this LoRA adapter was saved with other settings (${text(settings)}) than this agent's lora (${text(own)})`,
        {
          file: dir,
          hint: "give the agent's lora the adapter's settings",
        },
      );
    }
    for (const [name, t] of tensors) this.lora.adapter.get(name)!.data.set(t.data);
    await this.training.loadOptimizer(dir, options.optimizer);
  }
}
