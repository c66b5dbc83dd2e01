import type { Plugin } from '@drmas/core';
import type { trainerSchema } from '../config/trainerSchema.js';

/**
 * One feature of the trainer as a plugin of its own (`trainer:<feature>` is its name and tap name), chosen from the
 * config by `trainerBuiltins` and registered and applied by the trainer plugin, in the order that list gives.
 */
export type TrainerBuiltin = Plugin<unknown, typeof trainerSchema>;
