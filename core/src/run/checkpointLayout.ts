import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { DrmasError } from '../errors/DrmasError.js';

/**
 * Checkpoints live in `<runDir>/checkpoints/step-<NNNNNN>/`. A checkpoint is complete when its
 * `trainer_state.json` exists: writers build it in a `.partial-*` folder and rename it into place last, so a
 * killed write never looks complete.
 */
export const CHECKPOINTS_DIR = 'checkpoints';
export const CHECKPOINT_STATE_FILE = 'trainer_state.json';
const STEP_DIR = /^step-(\d+)$/;

export interface TrainerState {
  step: number;
  seed: number;
  /** Saved `Checkpointable` states by key. */
  states: Record<string, unknown>;
  /** Worker group ids with a model folder in the checkpoint. */
  workerGroups: string[];
}

export function checkpointDirName(step: number): string {
  return `step-${String(step).padStart(6, '0')}`;
}

/** Complete checkpoints of a run, oldest first. */
export function listCheckpoints(runDir: string): Array<{ step: number; dir: string }> {
  const root = path.join(runDir, CHECKPOINTS_DIR);
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .map((name) => ({ name, match: STEP_DIR.exec(name) }))
    .filter(({ name, match }) => match && existsSync(path.join(root, name, CHECKPOINT_STATE_FILE)))
    .map(({ name, match }) => ({ step: Number(match![1]), dir: path.join(root, name) }))
    .sort((a, b) => a.step - b.step);
}

export function readTrainerState(checkpointDir: string): TrainerState {
  const file = path.join(checkpointDir, CHECKPOINT_STATE_FILE);
  if (!existsSync(file)) {
    throw new DrmasError('INVALID_ARGUMENT', `${checkpointDir} is not a complete checkpoint (it has no ${CHECKPOINT_STATE_FILE})`, {
      file,
      hint: 'give a checkpoints/step-NNNNNN folder of a run, a run directory, or --resume auto',
    });
  }
  return JSON.parse(readFileSync(file, 'utf8')) as TrainerState;
}

/**
 * Finds what `--resume` names: a checkpoint folder, a run directory (its latest checkpoint), or `auto` (the
 * latest checkpoint of `runDir`, or of the newest run under `outputDir` when no run directory was given).
 */
export function resolveResume(
  spec: string,
  options: { runDir?: string; outputDir: string },
): { runDir: string; checkpoint: string; state: TrainerState } {
  let runDir: string | undefined;
  if (spec !== 'auto') {
    const target = path.resolve(spec);
    if (existsSync(path.join(target, CHECKPOINT_STATE_FILE)) || STEP_DIR.test(path.basename(target))) {
      return { runDir: path.dirname(path.dirname(target)), checkpoint: target, state: readTrainerState(target) };
    }
    runDir = target;
  } else if (options.runDir) {
    runDir = options.runDir;
  } else if (existsSync(options.outputDir)) {
    const runs = readdirSync(options.outputDir)
      .map((name) => path.join(options.outputDir, name))
      .filter((dir) => statSync(dir).isDirectory() && listCheckpoints(dir).length > 0)
      .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
    runDir = runs[0];
  }
  const latest = runDir ? listCheckpoints(runDir).at(-1) : undefined;
  if (!runDir || !latest) {
    throw new DrmasError('INVALID_ARGUMENT', `nothing to resume: no complete checkpoint in ${runDir ?? options.outputDir}`, {
      key: '--resume',
      hint: 'checkpoints are written every trainer.saveEvery steps and at the end; start without --resume',
    });
  }
  return { runDir, checkpoint: latest.dir, state: readTrainerState(latest.dir) };
}
