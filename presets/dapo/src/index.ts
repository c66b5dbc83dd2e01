export { default, DAPO_SETTINGS, dapoPreset } from './dapoPreset.js';
/** The algorithms plugin, as a type: the `algorithm` keys this preset sets are its. */
export type { AlgorithmsPlugin } from '@drmas/plugin-algorithms';
