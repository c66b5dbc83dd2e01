import path from 'node:path';
import type { ResolvedConfig } from '../config/ResolvedConfig.js';
import { resolveResume } from '../checkpoint/verifyCheckpoint.js';

/** Where a training run writes, and the checkpoint it continues from. */
export interface RunPlan {
  runDir: string;
  resume?: { checkpoint: string; step: number };
  /** Lines for the run log: checkpoints passed over and why, a checkpoint without a manifest, a resume that found none. */
  notes: string[];
}

function timestamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-').replace('T', '_').slice(0, 19);
}

/**
 * The run directory of a training run: `runDir` when given, else `<trainer.outputDir>/<trainer.runName or a
 * timestamp>` from `cwd`; with `resume` (`auto`, a run directory or a checkpoint folder), the run being continued
 * and its newest checkpoint that verifies (holding `workerGroups`, the run's, when given). `auto` that finds no
 * checkpoint plans a run from the beginning.
 */
export async function planRun(options: {
  cwd: string;
  config: ResolvedConfig;
  runDir?: string;
  resume?: string;
  workerGroups?: readonly string[];
}): Promise<RunPlan> {
  const { cwd, config } = options;
  const givenRunDir = options.runDir ? path.resolve(cwd, options.runDir) : undefined;
  const outputDir = path.resolve(cwd, config.trainer.outputDir);
  // A named run (`trainer.runName`) is the one `--resume auto` continues, not the newest under outputDir.
  const namedRunDir = givenRunDir ?? (config.trainer.runName ? path.join(outputDir, config.trainer.runName) : undefined);
  const fresh = () => namedRunDir ?? path.join(outputDir, timestamp());
  if (!options.resume) return { runDir: fresh(), notes: [] };
  const spec = options.resume === 'auto' ? 'auto' : path.resolve(cwd, options.resume);
  const found = await resolveResume(spec, { runDir: namedRunDir, outputDir, workerGroups: options.workerGroups });
  if (!found) {
    const runDir = fresh();
    return { runDir, notes: [`--resume auto: no checkpoint in ${namedRunDir ?? outputDir}, so the run starts at step 1`] };
  }
  const notes = found.skipped.map(
    ({ dir, error }) => `skipped checkpoint ${path.basename(dir)}: ${error.message}${error.file ? ` (${error.file})` : ''}`,
  );
  const { checkpoint } = found;
  if (checkpoint.legacy) {
    notes.push(
      `checkpoint ${path.basename(checkpoint.dir)} has no manifest.json (written before checkpoints carried one): ` +
        'checked its trainer_state.json and safetensors sizes only',
    );
  }
  return { runDir: found.runDir, resume: { checkpoint: checkpoint.dir, step: checkpoint.state.step }, notes };
}

/** The folder of an evaluation-only run: `runDir` when given, else `<trainer.outputDir>/eval-<time>` from `cwd`. */
export function planEvaluation(options: { cwd: string; config: ResolvedConfig; runDir?: string }): string {
  return options.runDir
    ? path.resolve(options.cwd, options.runDir)
    : path.resolve(options.cwd, options.config.trainer.outputDir, `eval-${new Date().toISOString().replace(/[:.]/g, '-')}`);
}
