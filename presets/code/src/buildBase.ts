import { fileURLToPath } from 'node:url';
import { BackendFactory, createKernel, Environment, type Plugin } from '@drmas/core';
import { BUILTIN_MODELS, builtinTokenizer } from '@drmas/models';
import type { CodeTask } from '@drmas/plugin-env-code';
import { teacherBackendFactory, warmupPresetBase, writeDemonstrations, type BaseBuildOptions } from '@drmas/plugin-orchestra';
import { codePreset } from './codePreset.js';

export const PRESET_DIR = fileURLToPath(new URL('..', import.meta.url));

/** The Coder's teacher: the task's reference one-liner in the answer format, looked up by the prompt's task text. */
export function codeTeacher(tasks: ReadonlyMap<string, CodeTask>): (prompt: string) => string {
  return (prompt) => {
    const task = tasks.get(/Code: (.*)\n/.exec(prompt)?.[1]?.trim() ?? '');
    return task?.solution ? `<code>${task.solution}</code>` : 'I cannot read the task.';
  };
}

/**
 * Writes demonstrations by running the real code orchestra on a teacher backend (so prompts are exactly what the
 * Coder sends), keeping the episodes whose code passed every test; returns the file and the number of lines.
 */
export async function writeCodeDemonstrations(
  options: Pick<BaseBuildOptions, 'rounds' | 'promptsPerStep' | 'seed' | 'workDir'>,
): Promise<{ file: string; lines: number }> {
  const promptsPerStep = options.promptsPerStep ?? 64;
  const tasks = new Map<string, CodeTask>();
  const codec = builtinTokenizer(BUILTIN_MODELS.tiny.vocab_size);
  const teacher: Plugin = {
    name: 'code-teacher',
    register: (ctx) => ctx.provide(BackendFactory, 'teacher', teacherBackendFactory(codec, codeTeacher(tasks))),
  };
  const { kernel } = await createKernel({
    cwd: PRESET_DIR,
    inline: {
      presets: [codePreset],
      plugins: [teacher],
      models: { policy: { backend: 'teacher', rollout: 'teacher', model: 'tiny' } },
      rollout: { promptsPerStep, samplesPerPrompt: 1 },
      trainer: { seed: options.seed ?? 0 },
    },
  });
  const environment = kernel.getNamed(Environment, 'code');
  await environment.init();
  for (const task of environment.batch(0, promptsPerStep * options.rounds).tasks as unknown as CodeTask[]) tasks.set(task.prompt, task);
  return writeDemonstrations(kernel, options.rounds, options.workDir);
}

/** The whole rebuild: demonstrations, then `drmas sft` of `tiny` on them, saved to `<outDir>/policy`. */
export async function buildCodeBase(options: BaseBuildOptions): Promise<number> {
  const { file } = await writeCodeDemonstrations(options);
  return warmupPresetBase(PRESET_DIR, file, options);
}
