export {
  default,
  ANSWERER_PROMPT,
  BASE_CHECKPOINT,
  SEARCH_DEFAULTS,
  searchPreset,
  SEARCHER_PROMPT,
  VERIFIER_PROMPT,
} from './searchPreset.js';
export {
  createMaskOrchestra,
  maskBlocks,
  maskF1Allocator,
  maskGraph,
  maskState,
  searchQuery,
  SEARCH_END,
  MASK_PLANNER_PROMPT,
  MASK_SUMMARIZER_PROMPT,
  MASK_UPDATER_PROMPT,
  type MaskState,
} from './workflows/mAsk.js';
export { createQdRagOrchestra, subQueries, MAX_SUB_QUERIES, QD_DECOMPOSER_PROMPT, QD_EVIDENCE_PROMPT } from './workflows/qdRag.js';
export { answerF1 } from './workflows/searchSteps.js';
export {
  AnswererAgent,
  DecomposerAgent,
  EvidenceAgent,
  PlannerAgent,
  SearcherAgent,
  searchWorkflowsPlugin,
  SummarizerAgent,
  UpdaterAgent,
} from './workflows/searchWorkflows.js';
export { createSearchOrchestra } from './workflows/searchOrchestra.js';
export { SEARCH_ORCHESTRA_PROMPTS } from './workflows/searchPrompts.js';
export { searchTeacher, type SearchTeacherKnowledge } from './searchTeacher.js';
export { buildSearchBase, PRESET_DIR, writeSearchDemonstrations, type BuildBaseOptions } from './buildBase.js';

export { defineConfig } from '@drmas/core';
/** The plugins this preset lists, as types: a config importing `defineConfig` from here is typed with their sections. */
export type { AlgorithmsPlugin } from '@drmas/plugin-algorithms';
export type { OnnxBackendPlugin } from '@drmas/plugin-backend-onnx';
export type { TrainerPlugin } from '@drmas/plugin-trainer';
export type { EnvSearchPlugin } from '@drmas/plugin-env-search';
export type { OrchestraPlugin } from '@drmas/plugin-orchestra';
export type { ReportPlugin } from '@drmas/plugin-report';
