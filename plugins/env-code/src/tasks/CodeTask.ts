import type { EnvTask } from '@drmas/core';
import type { CodeLanguage, CodeTest } from '../sandbox/CodeSandbox.js';

export type CodeSplit = 'train' | 'test';

/** One programming task: what to write, the tests that judge it, and the language it runs in. */
export interface CodeTask extends EnvTask {
  prompt: string;
  /** Code the solution continues or completes (a HumanEval signature and docstring); prepended when the answer lacks `entryPoint`. */
  starterCode?: string;
  /** The function the tests call, when there is one (HumanEval `entry_point`, APPS `fn_name`). */
  entryPoint?: string;
  tests: CodeTest[];
  language: CodeLanguage;
  /** A reference solution, when the source has one (synthetic tasks, MBPP `code`, HumanEval `canonical_solution`). */
  solution?: string;
  split: CodeSplit;
}
