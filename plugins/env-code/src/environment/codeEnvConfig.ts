import { envSection, z } from '@drmas/core';
import { CODE_LANGUAGES } from '../sandbox/CodeSandbox.js';

const language = z.enum(CODE_LANGUAGES as ['javascript', 'python']);

/** env-code's settings, under `env.code` (the flat `env` keys belong to the other environments). */
export const codeSection = z.strictObject({
  /** Languages of the synthetic tasks, drawn uniformly (Python tasks start a Pyodide worker). */
  languages: z.array(language).min(1).default(['javascript']),
  /** Size of the synthetic training pool, cycled in epochs. */
  trainSize: z.number().int().positive().max(1_000_000).default(4096),
  /** Size of the synthetic held-out list (distinct functions, none trained on). */
  testSize: z.number().int().min(0).max(10_000).default(48),
  /** A code dataset (JSON/JSONL; HumanEval, MBPP or problem/starter_code/tests records); replaces the synthetic tasks. */
  file: z.string().min(1).optional(),
  /** A separate held-out dataset; without it `env.testFraction` or the records' `split` decide. */
  testFile: z.string().min(1).optional(),
  /** The language of dataset records that name none. */
  language: language.default('python'),
  dataSource: z.string().min(1).optional(),
  /** Wall-clock budget of one solution with all its tests. */
  timeoutMs: z.number().int().positive().max(60_000).default(2000),
  /** Memory a solution may allocate. */
  memoryMb: z.number().int().min(4).max(2048).default(64),
  /** The episode outcome (the reward): the share of tests passed, or 1 only when all pass. */
  reward: z.enum(['fraction', 'all']).default('fraction'),
  /** The `python` Tool's budget per call (its CPU time, the episode's earlier cells and the new one, and memory). */
  pythonTool: z
    .strictObject({
      timeoutMs: z.number().int().positive().max(60_000).default(3000),
      memoryMb: z.number().int().min(4).max(2048).default(64),
    })
    .prefault({}),
});

export const codeEnvKeys = z.strictObject({ code: codeSection.prefault({}) });

export const codeEnvSettings = envSection.extend(codeEnvKeys.shape);
export type CodeEnvSettings = z.output<typeof codeEnvSettings>;
export type CodeEnvSettingsInput = z.input<typeof codeEnvSettings>;

declare module '@drmas/core' {
  interface EnvConfig extends z.input<typeof codeEnvKeys> {}
}
