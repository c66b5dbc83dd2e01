import { fileURLToPath } from 'node:url';
import { BackendFactory, createKernel, extractBoxedAnswer, hashParts, type Plugin } from '@drmas/core';
import { BUILTIN_MODELS, builtinTokenizer } from '@drmas/models';
import { ArithmeticTaskSource, mathAnswersEqual, solverDemonstration, type MathTask } from '@drmas/plugin-env-math';
import {
  teacherBackendFactory,
  warmupPresetBase,
  writeDemonstrations,
  type BaseBuildOptions,
  type DemonstrationLine,
} from '@drmas/plugin-orchestra';
import { BASE_CHECKPOINT as MATH_BASE_CHECKPOINT, wrongAnswer } from '@drmas/preset-math';
import { debatePreset, DEBATE_DEFAULTS } from './debatePreset.js';

export const PRESET_DIR = fileURLToPath(new URL('..', import.meta.url));

/** The math preset's base: the debate base continues from it. */
export const MATH_BASE = MATH_BASE_CHECKPOINT;

export interface DebateBaseOptions extends BaseBuildOptions {
  /** Share of questions on which PRO's teacher opens wrong (so CON learns to correct). */
  wrongRate?: number;
}

/** The question of a debater's prompt. */
const questionOf = (prompt: string) => /Solve: (.*)\n/.exec(prompt)?.[1]?.trim() ?? '';

/**
 * The debaters' teacher: a turn is the worked solution of the question in the math base's column style, except that
 * PRO opens with a wrong final answer on a share `wrongRate` of questions, which CON (seeing it) corrects: the
 * judge then gives CON the win, and the warm-up teaches CON to answer for itself rather than copy. `tasks` maps
 * questions to env-math tasks (their steps).
 */
export function debateTeacher(tasks: ReadonlyMap<string, MathTask>, wrongRate = 0.3): (prompt: string) => string {
  return (prompt) => {
    const question = questionOf(prompt);
    const task = tasks.get(question);
    if (!task) return 'I cannot read the question.';
    const correct = solverDemonstration(task, { method: 'columns' });
    const salt = hashParts(question, 'pro');
    if (!prompt.includes('The output of "pro"') && (salt % 1000) / 1000 < wrongRate) {
      const wrong = wrongAnswer(task.answer, salt);
      if (!mathAnswersEqual(wrong, task.answer)) return correct.replace(/\\boxed\{[^{}]*\}$/, `\\boxed{${wrong}}`);
    }
    return correct;
  };
}

/**
 * Writes demonstrations by running the real debate orchestra and environment on a teacher backend (so prompts are
 * exactly what the debaters send), keeping the episodes the judge scored 1; returns the file and its line count.
 */
export async function writeDebateDemonstrations(
  options: Pick<DebateBaseOptions, 'rounds' | 'promptsPerStep' | 'seed' | 'workDir' | 'wrongRate'>,
): Promise<{ file: string; lines: number }> {
  const promptsPerStep = options.promptsPerStep ?? 64;
  const env = DEBATE_DEFAULTS.env!.debate!;
  // The same generator env-debate's math tasks come from, so each question has its worked steps.
  const source = new ArithmeticTaskSource({ seed: 0, levels: env.levels!, trainSize: 4096, testSize: env.testSize! });
  const tasks = new Map<string, MathTask>();
  for (let i = 0; i < 4096; i++) {
    const task = source.train(i);
    tasks.set(task.question, task);
  }
  const codec = builtinTokenizer(BUILTIN_MODELS.tiny.vocab_size);
  const teacher: Plugin = {
    name: 'debate-teacher',
    register: (ctx) => ctx.provide(BackendFactory, 'teacher', teacherBackendFactory(codec, debateTeacher(tasks, options.wrongRate))),
  };
  const { kernel } = await createKernel({
    cwd: PRESET_DIR,
    inline: {
      presets: [debatePreset],
      plugins: [teacher],
      models: { policy: { backend: 'teacher', rollout: 'teacher', model: 'tiny' } },
      rollout: { promptsPerStep, samplesPerPrompt: 1 },
      trainer: { seed: options.seed ?? 0 },
    },
  });
  // PRO's deliberate mistakes are not imitated; the debates they start (CON correcting them) are.
  const keep = (line: DemonstrationLine) => {
    const task = tasks.get(questionOf(line.prompt));
    return task !== undefined && mathAnswersEqual(extractBoxedAnswer(line.response) ?? '', task.answer);
  };
  return writeDemonstrations(kernel, options.rounds, options.workDir, { keep });
}

/** The whole rebuild: demonstrations, then `drmas sft` from the math base on them, saved to `<outDir>/policy`. */
export async function buildDebateBase(options: DebateBaseOptions): Promise<number> {
  const { file } = await writeDebateDemonstrations(options);
  return warmupPresetBase(PRESET_DIR, file, { from: MATH_BASE, ...options });
}
