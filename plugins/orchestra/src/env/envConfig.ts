import { z } from '@drmas/core';

/** The `env` section: `name` picks the environment; the other keys are read by the environment named. */
export const envSection = z.object({
  /** An Environment registered by name (`math`, `search`). */
  name: z.string().min(1).default('math'),
  /** Seeds task generation, splits and epoch shuffles. */
  seed: z.number().int().default(0),
  /** Environment steps per episode; default 1 for math, 4 for search. */
  maxSteps: z.number().int().positive().optional(),
  /** Held-out share of a dataset or question set without its own test file. */
  testFraction: z.number().min(0).lt(1).optional(),
  // math
  /** Synthetic arithmetic levels (1-5), when no `file` is given. */
  levels: z.array(z.number().int().min(1).max(5)).min(1).default([1, 2]),
  /** A finite synthetic training pool; omitted: an endless stream. */
  trainSize: z.number().int().positive().optional(),
  testSize: z.number().int().min(0).default(64),
  /** A math dataset (JSONL/JSON with question and answer); replaces the synthetic tasks. */
  file: z.string().min(1).optional(),
  testFile: z.string().min(1).optional(),
  dataSource: z.string().min(1).optional(),
  /**
   * Training problems score 1 only when the answer is right and no `a+b=c` claim of the solution is false, so a
   * right answer reached through wrong steps is not reinforced; held-out problems are scored on the answer alone.
   */
  checkSteps: z.boolean().default(false),
  // search
  /** Entities of the synthetic knowledge base (one document each), when no questions file is given. */
  entities: z.number().int().min(12).default(120),
  /** Search-R1 QA JSONL (`question`, `golden_answers`); replaces the knowledge-base questions. */
  questionsFile: z.string().min(1).optional(),
  /** Search-R1 corpus JSONL (`id`, `contents`) for the in-process BM25 retriever. */
  corpusFile: z.string().min(1).optional(),
  /** Documents per search. */
  topk: z.number().int().positive().default(3),
  retriever: z.strictObject({
    /** Search-R1 retriever servers; when set, searches go over HTTP instead of the in-process BM25. */
    urls: z.array(z.string().min(1)).min(1).optional(),
    timeoutMs: z.number().positive().optional(),
    maxRetries: z.number().int().min(0).optional(),
  }).prefault({}),
});

export type EnvSettings = z.output<typeof envSection>;
