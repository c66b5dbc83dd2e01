import { envSection, z } from '@drmas/core';

const weight = z.number().min(0).max(100);

/** env-debate's settings, under `env.debate`. */
export const debateSection = z.strictObject({
  /**
   * The QuestionSet the synthetic tasks come from, by name: `math` (env-math's arithmetic questions with answers:
   * verifiable) or `motions` (env-debate's, no reference answer), or one a plugin provides.
   */
  tasks: z.string().min(1).default('math'),
  /** How debaters' answers are read and compared, an AnswerFormat by name: `math` (env-math's: `\boxed{}`, equal as math). */
  answerFormat: z.string().min(1).default('math'),
  /** Difficulty levels of the questions, for a set that grades them (the `math` set's arithmetic levels 1 to 5). */
  levels: z.array(z.number().int().min(1).max(5)).min(1).default([1]),
  /** Size of the synthetic training pool (the `math` set's; `motions` has 56), cycled in epochs. */
  trainSize: z.number().int().positive().max(1_000_000).default(4096),
  /** Held-out tasks at most (`motions` has 8 held out). */
  testSize: z.number().int().min(0).max(10_000).default(64),
  /** A debate dataset (JSON/JSONL records with `question`, optional `answer` and `split`); replaces the synthetic tasks. */
  file: z.string().min(1).optional(),
  /** A separate held-out dataset; without it `env.testFraction` or the records' `split` decide. */
  testFile: z.string().min(1).optional(),
  dataSource: z.string().min(1).optional(),
  /** Each debater's reward: `win` (1 to the winner, 0 to the others, 1/k each to k tied winners) or `score` (its rule score). */
  reward: z.enum(['win', 'score']).default('win'),
  /** Weights of the rule judge's criteria (a weighted mean; correctness only where the task has an answer). */
  weights: z
    .strictObject({
      structure: weight.default(1),
      evidence: weight.default(1),
      consistency: weight.default(1),
      correctness: weight.default(3),
    })
    .prefault({}),
});

export const debateEnvKeys = z.strictObject({ debate: debateSection.prefault({}) });

export const debateEnvSettings = envSection.extend(debateEnvKeys.shape);
export type DebateEnvSettings = z.output<typeof debateEnvSettings>;
export type DebateEnvSettingsInput = z.input<typeof debateEnvSettings>;

declare module '@drmas/core' {
  interface EnvConfig extends z.input<typeof debateEnvKeys> {}
}
