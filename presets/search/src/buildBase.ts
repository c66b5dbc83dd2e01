import { fileURLToPath } from 'node:url';
import { BackendFactory, createKernel, DrmasError, type Plugin } from '@drmas/core';
import { BUILTIN_MODELS, builtinTokenizer } from '@drmas/models';
import { generateKnowledgeBase } from '@drmas/plugin-env-search';
import {
  warmupPresetBase,
  teacherBackendFactory,
  writeDemonstrations,
  type BaseBuildOptions,
  type TeacherPolicy,
} from '@drmas/plugin-orchestra';
import { searchPreset } from './searchPreset.js';
import { searchTeacher } from './searchTeacher.js';

export const PRESET_DIR = fileURLToPath(new URL('..', import.meta.url));

export type BuildBaseOptions = BaseBuildOptions;

/**
 * Writes demonstrations by running the real search orchestra on a teacher backend (so prompts are exactly what the
 * agents send, information blocks included), keeping the successful episodes; returns the file and the number of
 * lines.
 */
export async function writeSearchDemonstrations(
  options: Pick<BuildBaseOptions, 'rounds' | 'promptsPerStep' | 'seed' | 'workDir'>,
): Promise<{ file: string; lines: number }> {
  const promptsPerStep = options.promptsPerStep ?? 32;
  const codec = builtinTokenizer(BUILTIN_MODELS.tiny.vocab_size);
  // The teacher reads the knowledge base the environment generates, known once the config is resolved.
  let policy: TeacherPolicy | undefined;
  const teacher: Plugin = {
    name: 'search-teacher',
    register: (ctx) =>
      ctx.provide(
        BackendFactory,
        'teacher',
        teacherBackendFactory(codec, (prompt) => policy!(prompt)),
      ),
  };
  const { kernel, config } = await createKernel({
    cwd: PRESET_DIR,
    inline: {
      presets: [searchPreset],
      plugins: [teacher],
      models: { policy: { backend: 'teacher', rollout: 'teacher', model: 'tiny' } },
      rollout: { promptsPerStep, samplesPerPrompt: 1 },
      trainer: { seed: options.seed ?? 0 },
    },
  });
  const env = config.env as { seed: number; entities: number; questionsFile?: string };
  if (env.questionsFile) {
    throw new DrmasError(
      'CONFIG_INVALID',
      'search demonstrations need the synthetic knowledge base, whose questions carry their solution steps',
      {
        key: 'env.questionsFile',
        hint: 'leave env.questionsFile unset when building the base checkpoint',
      },
    );
  }
  policy = searchTeacher(generateKnowledgeBase({ seed: env.seed, entities: env.entities }));
  return writeDemonstrations(kernel, options.rounds, options.workDir);
}

/** The whole rebuild: demonstrations, then `drmas sft` of `tiny` on them, saved to `<outDir>/policy`. */
export async function buildSearchBase(options: BuildBaseOptions): Promise<number> {
  const { file } = await writeSearchDemonstrations(options);
  return warmupPresetBase(PRESET_DIR, file, options);
}
