import { fileURLToPath } from 'node:url';
import { BackendFactory, createKernel, Environment, extractBoxedAnswer, type Plugin } from '@drmas/core';
import { BUILTIN_MODELS, builtinTokenizer } from '@drmas/models';
import { mathAnswersEqual, type MathTask } from '@drmas/plugin-env-math';
import {
  warmupPresetBase,
  type DemonstrationLine,
  teacherBackendFactory,
  writeDemonstrations,
  type BaseBuildOptions,
} from '@drmas/plugin-orchestra';
import { mathPreset } from './mathPreset.js';
import { mathTeacher } from './mathTeacher.js';

export const PRESET_DIR = fileURLToPath(new URL('..', import.meta.url));

export interface BuildBaseOptions extends BaseBuildOptions {
  /** Share of first Solver attempts that are wrong (so the Verifier learns to reject). */
  wrongRate?: number;
}

/**
 * Writes demonstrations by running the real math orchestra on a teacher backend (so prompts are exactly what the
 * agents send), keeping the successful episodes; returns the file and the number of lines.
 */
export async function writeMathDemonstrations(
  options: Pick<BuildBaseOptions, 'rounds' | 'promptsPerStep' | 'wrongRate' | 'seed' | 'workDir'>,
): Promise<{ file: string; lines: number }> {
  const promptsPerStep = options.promptsPerStep ?? 64;
  const tasks = new Map<string, MathTask>();
  const codec = builtinTokenizer(BUILTIN_MODELS.tiny.vocab_size);
  const teacher: Plugin = {
    name: 'math-teacher',
    register: (ctx) =>
      ctx.provide(BackendFactory, 'teacher', teacherBackendFactory(codec, mathTeacher(tasks, { wrongRate: options.wrongRate }))),
  };
  const { kernel } = await createKernel({
    cwd: PRESET_DIR,
    inline: {
      presets: [mathPreset],
      plugins: [teacher],
      models: { policy: { backend: 'teacher', rollout: 'teacher', model: 'tiny' } },
      rollout: { promptsPerStep, samplesPerPrompt: 1 },
      trainer: { seed: options.seed ?? 0 },
    },
  });
  const environment = kernel.getNamed(Environment, 'math');
  await environment.init();
  for (const task of environment.batch(0, promptsPerStep * options.rounds).tasks as unknown as MathTask[]) tasks.set(task.question, task);
  // The Solver's deliberately wrong first attempts teach the Verifier to reject; the Solver itself only imitates right answers.
  const keep = (line: DemonstrationLine) => {
    if (line.agent !== 'solver') return true;
    const task = tasks.get(/Solve: (.*)\n/.exec(line.prompt)?.[1]?.trim() ?? '');
    return task !== undefined && mathAnswersEqual(extractBoxedAnswer(line.response) ?? '', task.answer);
  };
  return writeDemonstrations(kernel, options.rounds, options.workDir, { keep });
}

/** The whole rebuild: demonstrations, then `drmas sft` of `tiny` on them, saved to `<outDir>/policy`. */
export async function buildMathBase(options: BuildBaseOptions): Promise<number> {
  const { file } = await writeMathDemonstrations(options);
  return warmupPresetBase(PRESET_DIR, file, options);
}
