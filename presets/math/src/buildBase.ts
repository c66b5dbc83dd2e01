import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BackendFactory, builtinPlugins, createKernel, main, type CliIO, type Plugin } from '@drmas/core';
import { BUILTIN_MODELS, builtinTokenizer } from '@drmas/plugin-backend-tfjs';
import type { MathTask } from '@drmas/plugin-env-math';
import { collectDemonstrations, Environment, teacherBackendFactory } from '@drmas/plugin-orchestra';
import { mathPreset } from './mathPreset.js';
import { mathTeacher } from './mathTeacher.js';

export const PRESET_DIR = fileURLToPath(new URL('..', import.meta.url));

export interface BuildBaseOptions {
  /** Rollout rounds of the teacher (each draws `promptsPerStep` training tasks). */
  rounds: number;
  promptsPerStep?: number;
  /** Share of first Solver attempts that are wrong (so the Verifier learns to reject). */
  wrongRate?: number;
  seed?: number;
  /** Where demonstrations.jsonl is written. */
  workDir: string;
  /** The checkpoint folder the model is saved under (as `<outDir>/policy`). */
  outDir: string;
  epochs: number;
  lr?: number;
  batchSize?: number;
  dtype?: 'float32' | 'bfloat16';
  io?: CliIO;
}

/**
 * Writes demonstrations by running the real math orchestra on a teacher backend (so prompts are exactly what the
 * agents send), keeping the successful episodes; returns the file and the number of lines.
 */
export async function writeMathDemonstrations(options: Pick<BuildBaseOptions, 'rounds' | 'promptsPerStep' | 'wrongRate' | 'seed' | 'workDir'>): Promise<{ file: string; lines: number }> {
  const promptsPerStep = options.promptsPerStep ?? 64;
  const tasks = new Map<string, MathTask>();
  const codec = builtinTokenizer(BUILTIN_MODELS.tiny.vocab_size);
  const teacher: Plugin = {
    name: 'math-teacher',
    register: (ctx) => ctx.provide(BackendFactory, 'teacher', teacherBackendFactory(codec, mathTeacher(tasks, { wrongRate: options.wrongRate }))),
    apply() {},
  };
  const { kernel } = await createKernel({
    cwd: PRESET_DIR, builtins: builtinPlugins('info'),
    inline: {
      presets: [mathPreset], plugins: [teacher],
      models: { policy: { backend: 'teacher', rollout: 'teacher', model: 'tiny' } },
      rollout: { promptsPerStep, samplesPerPrompt: 1 },
      trainer: { seed: options.seed ?? 0 },
    },
  });
  const environment = kernel.getNamed(Environment, 'math');
  await environment.init();
  for (const task of environment.batch(0, promptsPerStep * options.rounds).tasks as unknown as MathTask[]) tasks.set(task.question, task);
  const run = await kernel.setup({ runDir: options.workDir, log: () => {} });
  try {
    const demos = await collectDemonstrations(kernel, run, options.rounds);
    mkdirSync(options.workDir, { recursive: true });
    const file = path.join(options.workDir, 'demonstrations.jsonl');
    writeFileSync(file, demos.map((d) => JSON.stringify(d)).join('\n') + '\n');
    return { file, lines: demos.length };
  } finally {
    await kernel.hooks.shutdown.promise();
  }
}

/** The whole rebuild: demonstrations, then `drmas sft` of `tiny` on them, saved to `<outDir>/policy`. */
export async function buildMathBase(options: BuildBaseOptions): Promise<number> {
  const { file } = await writeMathDemonstrations(options);
  const io = options.io ?? { stdout: process.stdout, stderr: process.stderr, cwd: PRESET_DIR };
  return main([
    'sft', '--config', path.join(PRESET_DIR, 'base.config.json'), '--data', file, '--out', options.outDir,
    '--epochs', String(options.epochs), '--lr', String(options.lr ?? 2e-3), '--batch-size', String(options.batchSize ?? 32),
    '--dtype', options.dtype ?? 'bfloat16', '--set', `trainer.seed=${options.seed ?? 0}`, '--set', `trainer.outputDir=${options.workDir}`,
  ], { ...io, cwd: PRESET_DIR });
}
