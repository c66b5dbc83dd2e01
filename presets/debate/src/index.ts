export { default, BASE_CHECKPOINT, DEBATE_DEFAULTS, DEBATER_PROMPT, debatePreset } from './debatePreset.js';

export { defineConfig } from '@drmas/core';
/** The plugins this preset lists, as types: a config importing `defineConfig` from here is typed with their sections. */
export type { AlgorithmsPlugin } from '@drmas/plugin-algorithms';
export type { TrainerPlugin } from '@drmas/plugin-trainer';
export type { EnvMathPlugin } from '@drmas/plugin-env-math';
export type { EnvDebatePlugin } from '@drmas/plugin-env-debate';
export type { OrchestraPlugin } from '@drmas/plugin-orchestra';
export type { ReportPlugin } from '@drmas/plugin-report';
export { buildDebateBase, debateTeacher, MATH_BASE, PRESET_DIR, writeDebateDemonstrations, type DebateBaseOptions } from './buildBase.js';
