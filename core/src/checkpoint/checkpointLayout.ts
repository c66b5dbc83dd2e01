import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { DrmasError } from '../errors/DrmasError.js';

/**
 * Checkpoints live in `<runDir>/checkpoints/step-<NNNNNN>/`. Writers build one in a `.partial-*` folder, write its
 * `manifest.json` (every file's size and sha256) last and rename the folder into place, so a killed write never
 * shows as a step folder; whether a step folder is intact is `verifyCheckpoint`'s call.
 */
export const CHECKPOINTS_DIR = 'checkpoints';
export const CHECKPOINT_STATE_FILE = 'trainer_state.json';
/**
 * The checkpoint format `trainer_state.json` records as `format`: 2 carries a `manifest.json`. Checkpoints written
 * before it have no `format` key and no manifest (format 1) and are still loaded.
 */
export const CHECKPOINT_FORMAT = 2;
const STEP_DIR = /^step-(\d+)$/;

/** What `trainer_state.json` holds. */
export interface TrainerState {
  /** 2 since checkpoints carry a manifest; absent in older checkpoints. */
  format?: number;
  step: number;
  seed: number;
  /** Saved `Checkpointable` states by key. */
  states: Record<string, unknown>;
  /** Worker group ids with a model folder in the checkpoint. */
  workerGroups: string[];
}

const trainerStateSchema = z.object({
  format: z.number().int().positive().optional(),
  step: z.number().int().nonnegative(),
  seed: z.number().int(),
  states: z.record(z.string(), z.unknown()),
  workerGroups: z.array(
    z
      .string()
      .min(1)
      .refine((id) => !path.isAbsolute(id) && !id.split(/[\\/]/).includes('..'), { message: 'must name a folder inside the checkpoint' }),
  ),
});

const DAMAGED_HINT =
  'the checkpoint is damaged: use an earlier checkpoint of the run (--resume auto takes the newest that verifies) or delete this one';

export function checkpointDirName(step: number): string {
  return `step-${String(step).padStart(6, '0')}`;
}

/** The step a `step-NNNNNN` folder name stands for, or undefined for any other name. */
export function checkpointStepOf(dir: string): number | undefined {
  const match = STEP_DIR.exec(path.basename(dir));
  return match ? Number(match[1]) : undefined;
}

/** The checkpoint folders (`step-NNNNNN`) of a run, oldest first, intact or not. */
export function listCheckpoints(runDir: string): Array<{ step: number; dir: string }> {
  const root = path.join(runDir, CHECKPOINTS_DIR);
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && STEP_DIR.test(entry.name))
    .map((entry) => ({ step: checkpointStepOf(entry.name)!, dir: path.join(root, entry.name) }))
    .sort((a, b) => a.step - b.step);
}

/**
 * A system error met while reading a checkpoint (EACCES, EISDIR, ...) as the CHECKPOINT_INVALID error it is for the
 * user; anything else is passed on as it is.
 */
export function asCheckpointError(error: unknown, dir: string): unknown {
  const system = error as NodeJS.ErrnoException;
  if (DrmasError.is(error) || typeof system?.syscall !== 'string') return error;
  return checkpointError(
    system.path ?? dir,
    `cannot read the checkpoint: ${system.message}`,
    'check that the checkpoint folder is readable',
  );
}

/** A CHECKPOINT_INVALID error about one file of a checkpoint. */
export function checkpointError(file: string, message: string, hint = DAMAGED_HINT): DrmasError {
  return new DrmasError('CHECKPOINT_INVALID', message, { file, hint });
}

/** Where JSON.parse stops on `text`: the engine says for most errors, not for an unexpected token. */
function jsonErrorOffset(text: string, error: Error): number {
  const given = /at position (\d+)/.exec(error.message);
  if (given) return Number(given[1]);
  if (/Unexpected end of JSON input/.test(error.message)) return text.length;
  // A prefix up to the bad character parses or ends early; one past it fails before its end. Bisect for it.
  const endsEarly = (length: number) => {
    try {
      JSON.parse(text.slice(0, length));
      return true;
    } catch (e) {
      const at = /at position (\d+)/.exec((e as Error).message);
      return /Unexpected end of JSON input/.test((e as Error).message) || (at !== null && Number(at[1]) >= length);
    }
  };
  let good = 0;
  let bad = text.length;
  while (bad - good > 1) {
    const mid = (good + bad) >> 1;
    if (endsEarly(mid)) good = mid;
    else bad = mid;
  }
  return good;
}

function jsonErrorPosition(text: string, error: Error): string {
  const offset = jsonErrorOffset(text, error);
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return ` at line ${line}, column ${offset - before.lastIndexOf('\n')} (offset ${offset} of ${text.length})`;
}

/** Parses a checkpoint's JSON file; an empty or malformed one is a CHECKPOINT_INVALID error saying where it breaks. */
export function parseCheckpointJson(file: string, text: string): unknown {
  if (text.trim() === '') throw checkpointError(file, `${path.basename(file)} is empty (${Buffer.byteLength(text)} bytes)`);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const err = error as Error;
    throw checkpointError(file, `${path.basename(file)} is not valid JSON${jsonErrorPosition(text, err)}: ${err.message}`);
  }
}

/** One line per zod issue: `step: expected a non-negative integer, found "abc"`. */
export function describeIssues(issues: readonly z.core.$ZodIssue[], value: unknown): string {
  return issues
    .map((issue) => {
      let found: unknown = value;
      for (const key of issue.path) found = (found as Record<PropertyKey, unknown> | undefined)?.[key];
      const where = issue.path.length ? issue.path.join('.') : '(the whole file)';
      return `${where}: ${issue.message}${found === undefined ? '' : `, found ${JSON.stringify(found)}`}`;
    })
    .join('; ');
}

/**
 * Reads and validates `trainer_state.json`: step a non-negative integer (and the folder's own step when it is a
 * `step-NNNNNN` folder), seed an integer, worker groups a list of ids, states an object.
 */
export function readTrainerState(checkpointDir: string): TrainerState {
  const file = path.join(checkpointDir, CHECKPOINT_STATE_FILE);
  if (!existsSync(file)) {
    throw new DrmasError('CHECKPOINT_INVALID', `${checkpointDir} has no ${CHECKPOINT_STATE_FILE}, so it is not a complete checkpoint`, {
      file,
      hint: 'give a checkpoints/step-NNNNNN folder of a run, a run directory, or --resume auto (which takes the newest checkpoint that verifies)',
    });
  }
  const raw = parseCheckpointJson(file, readFileSync(file, 'utf8'));
  const parsed = trainerStateSchema.safeParse(raw);
  if (!parsed.success) throw checkpointError(file, `${CHECKPOINT_STATE_FILE} is malformed: ${describeIssues(parsed.error.issues, raw)}`);
  const state = parsed.data;
  if (state.format !== undefined && state.format > CHECKPOINT_FORMAT) {
    throw checkpointError(
      file,
      `the checkpoint has format ${state.format}; this drmas reads formats up to ${CHECKPOINT_FORMAT}`,
      'it was written by a newer drmas: upgrade @drmas/core to resume it',
    );
  }
  const folderStep = checkpointStepOf(checkpointDir);
  if (folderStep !== undefined && folderStep !== state.step) {
    throw checkpointError(file, `${CHECKPOINT_STATE_FILE} says step ${state.step} but its folder is ${path.basename(checkpointDir)}`);
  }
  return state;
}

/**
 * Fails unless a checkpoint holds exactly the run's worker groups (in any order): its models could not be matched
 * to the run's otherwise.
 */
export function checkWorkerGroups(checkpointDir: string, saved: readonly string[], run: readonly string[]): void {
  const missing = run.filter((id) => !saved.includes(id));
  const extra = saved.filter((id) => !run.includes(id));
  if (missing.length === 0 && extra.length === 0) return;
  const list = (ids: readonly string[]) => `[${ids.join(', ')}]`;
  throw new DrmasError(
    'CHECKPOINT_INVALID',
    `the checkpoint holds worker groups ${list(saved)} but this run has ${list(run)}` +
      `${missing.length ? `; missing: ${list(missing)}` : ''}${extra.length ? `; not in this run: ${list(extra)}` : ''}`,
    {
      file: path.join(checkpointDir, CHECKPOINT_STATE_FILE),
      hint:
        'worker groups are the model ids the agents use: resume with the config that wrote the checkpoint (config.json in its run ' +
        'directory), or start a new run without --resume',
    },
  );
}
