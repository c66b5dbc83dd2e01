import type { EnvTask, ToolTaskContent } from '@drmas/core';

/** A tool-use task: a question whose answer is checked, maybe with files the episode's filesystem starts with. */
export interface ToolTask extends EnvTask, ToolTaskContent {}
