import { envSection, z } from '@drmas/core';

/** The keys env-math adds to the `env` section (core owns `name`, `seed`, `maxRounds` and `testFraction`). */
export const mathEnvKeys = z.strictObject({
  /** Synthetic arithmetic levels (1-5), when no `file` is given. */
  levels: z.array(z.number().int().min(1).max(5)).min(1).default([1, 2]),
  /** A finite synthetic training pool; omitted: an endless stream. */
  trainSize: z.number().int().positive().max(100_000_000).optional(),
  testSize: z.number().int().min(0).max(1_000_000).default(64),
  /** A math dataset (JSONL/JSON with question and answer); replaces the synthetic tasks. */
  file: z.string().min(1).optional(),
  testFile: z.string().min(1).optional(),
  dataSource: z.string().min(1).optional(),
  /**
   * Training problems score 1 only when the answer is right and no `a+b=c` claim of the solution is false, so a
   * right answer reached through wrong steps is not reinforced; held-out problems are scored on the answer alone.
   */
  checkSteps: z.boolean().default(false),
});

/** What the math environment reads of `env`: the shared keys and its own. */
export const mathEnvSettings = envSection.extend(mathEnvKeys.shape);
export type MathEnvSettings = z.output<typeof mathEnvSettings>;
export type MathEnvSettingsInput = z.input<typeof mathEnvSettings>;

declare module '@drmas/core' {
  interface EnvConfig extends z.input<typeof mathEnvKeys> {}
}
