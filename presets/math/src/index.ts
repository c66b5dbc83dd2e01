export { default, BASE_CHECKPOINT, MATH_DEFAULTS, mathPreset, SOLVER_PROMPT, VERIFIER_PROMPT } from './mathPreset.js';
export { mathTeacher, wrongAnswer } from './mathTeacher.js';
export {
  FINALIZER_PROMPT,
  FinalizerAgent,
  mathFourAgentGraph,
  mathFourAgentOrchestra,
  mathWorkflowsPlugin,
  REFINER_PROMPT,
  RefinerAgent,
} from './mathFourAgent.js';
export { buildMathBase, PRESET_DIR, writeMathDemonstrations, type BuildBaseOptions } from './buildBase.js';

export { defineConfig } from '@drmas/core';
/** The plugins this preset lists, as types: a config importing `defineConfig` from here is typed with their sections. */
export type { AlgorithmsPlugin } from '@drmas/plugin-algorithms';
export type { OnnxBackendPlugin } from '@drmas/plugin-backend-onnx';
export type { TrainerPlugin } from '@drmas/plugin-trainer';
export type { EnvMathPlugin } from '@drmas/plugin-env-math';
export type { OrchestraPlugin } from '@drmas/plugin-orchestra';
export type { ReportPlugin } from '@drmas/plugin-report';
