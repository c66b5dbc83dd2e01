import { fileURLToPath } from 'node:url';
import { BackendFactory, createKernel, Environment, type Plugin } from '@drmas/core';
import { BUILTIN_MODELS, builtinTokenizer } from '@drmas/models';
import type { ToolTask } from '@drmas/plugin-env-tools';
import { teacherBackendFactory, warmupPresetBase, writeDemonstrations, type BaseBuildOptions } from '@drmas/plugin-orchestra';
import { toolsPreset } from './toolsPreset.js';

export const PRESET_DIR = fileURLToPath(new URL('..', import.meta.url));

/**
 * The Assistant's teacher: the task's first call (`solution`) while no tool has answered, then the answer: a one-word
 * result as it stands (the calculator's value, the file's text: file questions repeat with other contents, so the
 * task looked up by its question may be another's), else the task's answer, which the passage found holds.
 */
export function toolsTeacher(tasks: ReadonlyMap<string, ToolTask>): (prompt: string) => string {
  return (prompt) => {
    const task = tasks.get(/\nQ: (.*)\n/.exec(prompt)?.[1]?.trim() ?? '');
    if (!task?.solution) return 'I cannot read the task.';
    const result = /<tool_response>([\s\S]*?)<\/tool_response>/.exec(prompt)?.[1]?.trim();
    if (result === undefined) return `<tool_call>${JSON.stringify(task.solution)}</tool_call>`;
    return `<answer>${/^\S+$/.test(result) ? result : task.answer}</answer>`;
  };
}

/**
 * Writes demonstrations by running the real tools orchestra on a teacher backend (so prompts are exactly what the
 * Assistant sends, tool results included), keeping the successful episodes; returns the file and its line count.
 */
export async function writeToolsDemonstrations(
  options: Pick<BaseBuildOptions, 'rounds' | 'promptsPerStep' | 'seed' | 'workDir'>,
): Promise<{ file: string; lines: number }> {
  const promptsPerStep = options.promptsPerStep ?? 64;
  const tasks = new Map<string, ToolTask>();
  const codec = builtinTokenizer(BUILTIN_MODELS.tiny.vocab_size);
  const teacher: Plugin = {
    name: 'tools-teacher',
    register: (ctx) => ctx.provide(BackendFactory, 'teacher', teacherBackendFactory(codec, toolsTeacher(tasks))),
  };
  const { kernel } = await createKernel({
    cwd: PRESET_DIR,
    inline: {
      presets: [toolsPreset],
      plugins: [teacher],
      models: { policy: { backend: 'teacher', rollout: 'teacher', model: 'tiny' } },
      rollout: { promptsPerStep, samplesPerPrompt: 1 },
      trainer: { seed: options.seed ?? 0 },
    },
  });
  const environment = kernel.getNamed(Environment, 'tools');
  await environment.init();
  for (const task of environment.batch(0, promptsPerStep * options.rounds).tasks as unknown as ToolTask[]) tasks.set(task.question, task);
  return writeDemonstrations(kernel, options.rounds, options.workDir);
}

/** The whole rebuild: demonstrations, then `drmas sft` of `tiny` on them, saved to `<outDir>/policy`. */
export async function buildToolsBase(options: BaseBuildOptions): Promise<number> {
  const { file } = await writeToolsDemonstrations(options);
  return warmupPresetBase(PRESET_DIR, file, options);
}
