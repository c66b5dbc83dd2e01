import { createReadStream, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { DrmasError } from '../errors/DrmasError.js';
import type { RunFile } from '../services/RunFile.js';
import { CHECKPOINTS_DIR, listCheckpoints } from '../checkpoint/checkpointLayout.js';

/** What the kernel itself writes into a run directory; plugins add theirs as `RunFile` contributions. */
export const CORE_RUN_FILES: readonly RunFile[] = Object.freeze([
  { path: 'metrics.jsonl', kind: 'steps' },
  { path: 'config.json', kind: 'artifact' },
]);
const CUT_SUFFIX = '.cut';
/** Characters of kept lines gathered before one write. */
const WRITE_BLOCK = 1 << 20;

export interface CutResult {
  kept: number;
  /** Lines of steps after the cut. */
  dropped: number;
  /** Lines that are not a JSON object: the last line a kill tore in the middle of a write. */
  torn: number;
}

/** A system error met while rewriting or moving a run's files, as the OUTPUT_UNWRITABLE error it is for the user. */
function asOutputError(error: unknown, target: string, what: string): unknown {
  const system = error as NodeJS.ErrnoException;
  if (DrmasError.is(error) || typeof system?.syscall !== 'string') return error;
  return new DrmasError('OUTPUT_UNWRITABLE', `cannot ${what}: ${system.message}`, {
    file: system.path ?? target,
    hint: 'check that the run directory is writable and its disk has room',
  });
}

async function fsyncPath(target: string): Promise<void> {
  const handle = await open(target, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The hidden file a cut writes before renaming it over `file`. */
function cutTempOf(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}${CUT_SUFFIX}`);
}

/**
 * Keeps the lines of `file` up to `step` and drops torn ones, by streaming them into a new file renamed over the old
 * (a kill during the cut leaves either file whole, never an empty one). Lines whose JSON has no numeric `step` are
 * kept. Undefined when there is no such file; the file is left as it is when nothing is dropped.
 */
export async function cutStepLines(file: string, step: number): Promise<CutResult | undefined> {
  try {
    return await cutFile(file, step);
  } catch (error) {
    throw asOutputError(error, file, `cut ${path.basename(file)} to step ${step}`);
  }
}

async function cutFile(file: string, step: number): Promise<CutResult | undefined> {
  if (!existsSync(file)) return undefined;
  const temp = cutTempOf(file);
  const result: CutResult = { kept: 0, dropped: 0, torn: 0 };
  const out = await open(temp, 'w');
  const input = createReadStream(file);
  // Kept lines go out in blocks: one write call per line costs more than the reading and parsing together.
  let block: string[] = [];
  let blockLength = 0;
  const flush = async () => {
    if (block.length) await out.write(block.join(''));
    block = [];
    blockLength = 0;
  };
  try {
    for await (const line of createInterface({ input, crlfDelay: Infinity })) {
      if (line.trim() === '') continue;
      let record: unknown;
      try {
        record = JSON.parse(line);
      } catch {
        result.torn++;
        continue;
      }
      if (record === null || typeof record !== 'object' || Array.isArray(record)) {
        result.torn++;
        continue;
      }
      const lineStep = (record as { step?: unknown }).step;
      if (typeof lineStep === 'number' && lineStep > step) {
        result.dropped++;
        continue;
      }
      result.kept++;
      block.push(line, '\n');
      blockLength += line.length + 1;
      if (blockLength >= WRITE_BLOCK) await flush();
    }
    await flush();
    if (result.dropped || result.torn) await out.sync();
  } finally {
    input.destroy();
    await out.close();
  }
  if (result.dropped === 0 && result.torn === 0) {
    await rm(temp, { force: true });
    return result;
  }
  await rename(temp, file);
  await fsyncPath(path.dirname(file));
  return result;
}

function previousFolder(runDir: string, now: Date): string {
  return path.join(runDir, `previous-${now.toISOString().replace(/[:.]/g, '-')}`);
}

/**
 * Moves the checkpoint folders of steps after `step` into `runDir/previous-<time>/checkpoints/`: a run resumed from
 * an earlier checkpoint starts a new history from it, and a later checkpoint of the old one (whose lines the resume
 * cut) must not be resumed from afterwards. Returns that folder and the checkpoints moved, or undefined for none.
 */
export function setAsideLaterCheckpoints(runDir: string, step: number, now = new Date()): { dir: string; moved: string[] } | undefined {
  try {
    return moveLaterCheckpoints(runDir, step, now);
  } catch (error) {
    throw asOutputError(error, runDir, `move the checkpoints after step ${step} aside`);
  }
}

function moveLaterCheckpoints(runDir: string, step: number, now: Date): { dir: string; moved: string[] } | undefined {
  const later = listCheckpoints(runDir).filter((c) => c.step > step);
  if (later.length === 0) return undefined;
  const dir = previousFolder(runDir, now);
  mkdirSync(path.join(dir, CHECKPOINTS_DIR), { recursive: true });
  for (const checkpoint of later) renameSync(checkpoint.dir, path.join(dir, CHECKPOINTS_DIR, path.basename(checkpoint.dir)));
  return { dir, moved: later.map((c) => path.basename(c.dir)) };
}

/**
 * Moves an earlier run's files (its checkpoints and the `files` the kernel and plugins write) out of `runDir` into
 * `runDir/previous-<time>/`, so a run started afresh in a used folder neither appends to them nor mixes its
 * checkpoints with theirs. The folder holds a run when it has checkpoints or a `steps` file. Returns that folder and
 * what was moved, or undefined when the folder holds no run.
 */
export function setAsideEarlierRun(
  runDir: string,
  files: readonly RunFile[],
  now = new Date(),
): { dir: string; moved: string[] } | undefined {
  try {
    return moveEarlierRun(runDir, files, now);
  } catch (error) {
    throw asOutputError(error, runDir, "move the earlier run's files aside");
  }
}

function moveEarlierRun(runDir: string, files: readonly RunFile[], now: Date): { dir: string; moved: string[] } | undefined {
  if (!existsSync(runDir)) return undefined;
  const marks = new Set([CHECKPOINTS_DIR, ...files.filter((f) => f.kind === 'steps').map((f) => f.path)]);
  const present = [...new Set([CHECKPOINTS_DIR, ...files.map((f) => f.path)])].filter((name) => existsSync(path.join(runDir, name)));
  if (!present.some((name) => marks.has(name))) return undefined;
  const dir = previousFolder(runDir, now);
  mkdirSync(dir, { recursive: true });
  for (const name of present) renameSync(path.join(runDir, name), path.join(dir, name));
  // A cut a kill interrupted leaves its hidden temporary file; it belongs to the files just moved.
  for (const name of readdirSync(runDir)) {
    if (name.startsWith('.') && name.endsWith(CUT_SUFFIX)) rmSync(path.join(runDir, name), { force: true });
  }
  return { dir, moved: present };
}
