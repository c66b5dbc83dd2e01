import { z, type PluginConfig } from '@drmas/core';
import { criticSection } from './criticConfig.js';
import { loraSection } from './loraConfig.js';
import { optimizerSection, spikeGuardSection, trainerSection, trainOverridesSection } from './trainingConfig.js';

/** The config sections the trainer plugin declares (its `configSchema`). */
export const trainerSchema = {
  trainer: trainerSection,
  models: z.strictObject({ optimizer: optimizerSection.prefault({}), spikeGuard: spikeGuardSection.optional() }),
  agents: z.strictObject({
    train: trainOverridesSection.optional(),
    /** false: the agent samples but is never trained (its rows leave the loss). Default true. */
    trainable: z.boolean().optional(),
    /** Train a LoRA adapter of the agent's own on its model (a frozen base shared with the other agents on it). */
    lora: loraSection.optional(),
  }),
  critic: criticSection,
};

/** The run's config as the trainer and its built-in plugins read it: its sections typed from `trainerSchema`. */
export type TrainerConfig = PluginConfig<typeof trainerSchema>;
