export { default, DAPO_SETTINGS, dapoPreset } from './dapoPreset.js';
