export { default, BASE_CHECKPOINT, CODE_DEFAULTS, codePreset } from './codePreset.js';
export { CODER_PROMPT, CoderAgent, codeOrchestra } from './codeOrchestra.js';
export { codeOrchestraPlugin } from './codeOrchestraPlugin.js';
export {
  codeTurns,
  PlannerAgent,
  REFLECTIVE_CODE_TURNS,
  reflectiveCodeGraph,
  reflectiveCodeOrchestra,
  reflectiveCodeState,
  ReflectorAgent,
  verifyLatestCode,
  type ReflectiveCodeState,
} from './reflectiveCode.js';

export { defineConfig } from '@drmas/core';
/** The plugins this preset lists, as types: a config importing `defineConfig` from here is typed with their sections. */
export type { AlgorithmsPlugin } from '@drmas/plugin-algorithms';
export type { OnnxBackendPlugin } from '@drmas/plugin-backend-onnx';
export type { TrainerPlugin } from '@drmas/plugin-trainer';
export type { EnvCodePlugin } from '@drmas/plugin-env-code';
export type { OrchestraPlugin } from '@drmas/plugin-orchestra';
export type { ReportPlugin } from '@drmas/plugin-report';
export { buildCodeBase, codeTeacher, PRESET_DIR, writeCodeDemonstrations } from './buildBase.js';
