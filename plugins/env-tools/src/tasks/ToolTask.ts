import type { EnvTask } from '@drmas/core';
import type { ParsedToolCall } from '@drmas/models';

/** A tool-use task: a question whose answer is checked, maybe with files the episode's filesystem starts with. */
export interface ToolTask extends EnvTask {
  question: string;
  /** The expected answer (numbers compared exactly as numbers, other text after normalisation). */
  answer: string;
  /** Files (path to text) in the episode's filesystem at its start. */
  files?: Record<string, string>;
  /** The call a solver makes first (synthetic tasks): what the warm-up's teacher writes. */
  solution?: ParsedToolCall;
}
