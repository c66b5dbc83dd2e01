import path from 'node:path';
import type { ResolvedConfig } from '../config/ResolvedConfig.js';
import { resolveResume } from './checkpointLayout.js';

/** Where a training run writes, and the checkpoint it continues from. */
export interface RunPlan {
  runDir: string;
  resume?: { checkpoint: string; step: number };
}

function timestamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-').replace('T', '_').slice(0, 19);
}

/**
 * The run directory of a training run: `runDir` when given, else `<trainer.outputDir>/<trainer.runName or a
 * timestamp>` from `cwd`; with `resume` (`auto`, a run directory or a checkpoint folder), the run being continued.
 */
export function planRun(options: { cwd: string; config: ResolvedConfig; runDir?: string; resume?: string }): RunPlan {
  const { cwd, config } = options;
  const givenRunDir = options.runDir ? path.resolve(cwd, options.runDir) : undefined;
  const outputDir = path.resolve(cwd, config.trainer.outputDir);
  if (options.resume) {
    const found = resolveResume(options.resume === 'auto' ? 'auto' : path.resolve(cwd, options.resume), { runDir: givenRunDir, outputDir });
    return { runDir: found.runDir, resume: { checkpoint: found.checkpoint, step: found.state.step } };
  }
  return { runDir: givenRunDir ?? path.join(outputDir, config.trainer.runName ?? timestamp()) };
}

/** The folder of an evaluation-only run: `runDir` when given, else `<trainer.outputDir>/eval-<time>` from `cwd`. */
export function planEvaluation(options: { cwd: string; config: ResolvedConfig; runDir?: string }): string {
  return options.runDir
    ? path.resolve(options.cwd, options.runDir)
    : path.resolve(options.cwd, options.config.trainer.outputDir, `eval-${new Date().toISOString().replace(/[:.]/g, '-')}`);
}
