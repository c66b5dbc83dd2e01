import { envSection, z } from '@drmas/core';

/** The keys env-search adds to the `env` section (core owns `name`, `seed`, `maxRounds` and `testFraction`). */
export const searchEnvKeys = z.strictObject({
  /** Entities of the synthetic knowledge base (one document each), when no questions file is given. */
  entities: z.number().int().min(12).max(1_000_000).default(120),
  /**
   * Questions (`question`, `golden_answers`, with UnityMAS-O's field fallbacks) as JSONL, JSON or Parquet (Search-R1's
   * and verl's `train.parquet`); replaces the knowledge-base questions.
   */
  questionsFile: z.string().min(1).optional(),
  /** Search-R1 corpus JSONL (`id`, `contents`) for the in-process BM25 retriever. */
  corpusFile: z.string().min(1).optional(),
  /** Documents per search. */
  topk: z.number().int().positive().max(1_000).default(3),
  retriever: z
    .strictObject({
      /**
       * Search-R1 retriever servers; when set, searches go over HTTP instead of the in-process BM25. User info in a URL
       * (`http://user:password@host`) goes as basic auth and is hidden wherever the config is shown.
       */
      urls: z
        .array(z.string().min(1).meta({ secret: 'url' }))
        .min(1)
        .optional(),
      timeoutMs: z.number().positive().optional(),
      maxRetries: z.number().int().min(0).optional(),
    })
    .prefault({}),
});

/** What the search environment reads of `env`: the shared keys and its own. */
export const searchEnvSettings = envSection.extend(searchEnvKeys.shape);
export type SearchEnvSettings = z.output<typeof searchEnvSettings>;
export type SearchEnvSettingsInput = z.input<typeof searchEnvSettings>;

declare module '@drmas/core' {
  interface EnvConfig extends z.input<typeof searchEnvKeys> {}
}
