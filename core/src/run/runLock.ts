import { randomUUID } from 'node:crypto';
import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { DrmasError } from '../errors/DrmasError.js';
import { createOutputDirectory } from './outputDirectory.js';

/** The file in a run directory naming the process that writes it, for as long as it does. */
export const RUN_LOCK_FILE = 'run.lock';

/**
 * The environment variable through which a process that holds a run directory's lock (an experiment grid) hands it to
 * the `drmas` command it starts there: the lock's id. The command takes that lock over instead of refusing the folder,
 * so no other process can claim it between the two.
 */
export const RUN_LOCK_HANDOVER_ENV = 'DRMAS_RUN_LOCK_HANDOVER';

/** Who holds a run directory: written once, whole, when a run starts, removed when it ends. */
export interface RunLockHolder {
  pid: number;
  host: string;
  startedAt: string;
  command: string;
  /** Tells this lock from a later one of the same process. */
  id: string;
}

export interface RunLock {
  /** The holder's id, which hands the lock to a child process (RUN_LOCK_HANDOVER_ENV). */
  id: string;
  /** Removes the lock if it is still this one's (not taken over since). */
  release(): void;
  /** A holder that had died without removing its lock (a killed run): its lock was replaced. */
  replaced?: RunLockHolder;
  /** The holder that handed its lock to this process. */
  handedOverBy?: RunLockHolder;
}

/** Whether a process with this id runs on this machine (one of another user's counts). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readHolder(file: string): RunLockHolder | 'unreadable' | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return 'unreadable';
  }
  try {
    const holder = JSON.parse(text) as Partial<RunLockHolder>;
    return Number.isInteger(holder.pid) && typeof holder.host === 'string' ? (holder as RunLockHolder) : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

/** A holder on this machine whose process is gone: its run was killed before it could remove the lock. */
function isStale(holder: RunLockHolder): boolean {
  return holder.host === hostname() && !isProcessAlive(holder.pid);
}

/**
 * The process writing `runDir`, while there is one: a live process on this machine, or any holder on another (whose
 * liveness cannot be told from here). Undefined for a free folder or a stale lock.
 */
export function runLockHolder(runDir: string): RunLockHolder | undefined {
  const holder = readHolder(path.join(runDir, RUN_LOCK_FILE));
  return holder === undefined || holder === 'unreadable' || isStale(holder) ? undefined : holder;
}

function inUse(runDir: string, key: string, holder: RunLockHolder | 'unreadable'): DrmasError {
  const file = path.join(runDir, RUN_LOCK_FILE);
  if (holder === 'unreadable') {
    return new DrmasError('RUN_DIR_IN_USE', `${runDir} has a ${RUN_LOCK_FILE} that cannot be read as a drmas run lock`, {
      key,
      file,
      hint: `if no drmas run writes to ${runDir}, delete ${file}; else give ${key} another folder`,
    });
  }
  const here = holder.host === hostname();
  const who = `process ${holder.pid}${here ? '' : ` on ${holder.host}`}, started ${holder.startedAt}: ${holder.command}`;
  return new DrmasError('RUN_DIR_IN_USE', `${runDir} is being written by another drmas run (${who})`, {
    key,
    file,
    hint: here
      ? `wait for that run to end or stop it, or give ${key} another folder (a killed run's lock is taken over by the next run)`
      : `give ${key} another folder; if that run no longer runs on ${holder.host}, delete ${file}`,
  });
}

/** Puts the staged lock at `file` unless a lock is there; file systems without hard links get an exclusive create. */
function claim(staging: string, file: string): boolean {
  try {
    linkSync(staging, file);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw error;
  }
  try {
    writeFileSync(file, readFileSync(staging), { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/**
 * Removes a stale lock unless it changed since it was read: it is renamed aside first (rename is atomic), and a lock
 * that turns out to be a newer one (another process replaced the stale lock in between) is linked back.
 */
function breakStale(runDir: string, file: string, stale: RunLockHolder): boolean {
  const aside = path.join(runDir, `.${RUN_LOCK_FILE}-stale-${randomUUID()}`);
  try {
    renameSync(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  const moved = readHolder(aside);
  const same = moved !== undefined && moved !== 'unreadable' && moved.id === stale.id;
  if (!same) claim(aside, file);
  rmSync(aside, { force: true });
  return same;
}

/**
 * Creates `runDir` (as `createOutputDirectory`) and claims it for this process, or throws RUN_DIR_IN_USE naming the
 * process that writes it, before anything in it is moved or cut: two runs in one folder would interleave their
 * metrics and checkpoints, and a second fresh run would move the first one's files aside under it. The lock is
 * written whole under a temporary name and linked into place (link fails if the name exists), so a reader never
 * sees a half-written one. A lock whose process is gone (on this machine) is replaced; a lock whose id is `handover`
 * (given by the process that holds it, through RUN_LOCK_HANDOVER_ENV) is taken over in one rename.
 */
export function acquireRunLock(
  runDir: string,
  key: string,
  command = process.argv.slice(1).join(' '),
  handover = process.env[RUN_LOCK_HANDOVER_ENV],
): RunLock {
  createOutputDirectory(runDir, key);
  const file = path.join(runDir, RUN_LOCK_FILE);
  const holder: RunLockHolder = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString(), command, id: randomUUID() };
  const staging = path.join(runDir, `.${RUN_LOCK_FILE}-${holder.id}`);
  writeFileSync(staging, `${JSON.stringify(holder, null, 2)}\n`);
  let replaced: RunLockHolder | undefined;
  let handedOverBy: RunLockHolder | undefined;
  try {
    // Bounded: each pass either claims, takes over, breaks a stale lock or throws; a new stale lock after one was
    // broken is not chased.
    for (let pass = 0; !claim(staging, file); pass++) {
      const current = readHolder(file);
      if (current === undefined) continue;
      if (current !== 'unreadable' && handover !== undefined && current.id === handover) {
        renameSync(staging, file);
        handedOverBy = current;
        break;
      }
      if (current === 'unreadable' || !isStale(current) || pass > 2) throw inUse(runDir, key, current);
      if (breakStale(runDir, file, current)) replaced = current;
    }
  } finally {
    rmSync(staging, { force: true });
  }
  return {
    id: holder.id,
    replaced,
    handedOverBy,
    release: () => {
      const current = readHolder(file);
      if (current !== undefined && current !== 'unreadable' && current.id === holder.id) rmSync(file, { force: true });
    },
  };
}
