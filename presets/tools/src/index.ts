export { default, BASE_CHECKPOINT, TOOLS_DEFAULTS, toolsPreset } from './toolsPreset.js';
export { ASSISTANT_PROMPT, AssistantAgent, toolsOrchestra, toolsOrchestraPlugin } from './toolsOrchestra.js';

export { defineConfig } from '@drmas/core';
/** The plugins this preset lists, as types: a config importing `defineConfig` from here is typed with their sections. */
export type { AlgorithmsPlugin } from '@drmas/plugin-algorithms';
export type { OnnxBackendPlugin } from '@drmas/plugin-backend-onnx';
export type { TrainerPlugin } from '@drmas/plugin-trainer';
export type { EnvToolsPlugin } from '@drmas/plugin-env-tools';
export type { EnvSearchPlugin } from '@drmas/plugin-env-search';
export type { EnvCodePlugin } from '@drmas/plugin-env-code';
export type { OrchestraPlugin } from '@drmas/plugin-orchestra';
export type { ReportPlugin } from '@drmas/plugin-report';
export { buildToolsBase, PRESET_DIR, toolsTeacher, writeToolsDemonstrations } from './buildBase.js';
