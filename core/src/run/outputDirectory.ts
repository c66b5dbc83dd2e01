import { mkdirSync, mkdtempSync, rmdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { DrmasError } from '../errors/DrmasError.js';

/** System errors that say the disk has no room, whatever was being written. */
export const FULL_DISK_REASONS: Readonly<Record<string, string>> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
};

const REASONS: Readonly<Record<string, string>> = {
  EACCES: 'permission denied',
  EPERM: 'the operation is not permitted there',
  EROFS: 'the file system is read-only',
  ...FULL_DISK_REASONS,
  ENOTDIR: 'a part of the path is a file, not a folder',
  ENAMETOOLONG: 'the path is too long',
  ELOOP: 'the path has a loop of symbolic links',
};

function unwritable(dir: string, key: string, reason: string, cause?: unknown): DrmasError {
  return new DrmasError('OUTPUT_UNWRITABLE', `cannot write the output folder ${dir}: ${reason}`, {
    key,
    cause,
    hint: `give ${key} a folder you can write to (e.g. under the project folder or /tmp)`,
  });
}

function reasonOf(error: unknown, at: string): string {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  // mkdir answers ENOENT in a folder that exists when the file system accepts no new entries (/proc).
  if (code === 'ENOENT') return `the file system at ${at} does not let folders be created (mkdir: ENOENT)`;
  return `${REASONS[code] ?? (error as Error).message} (${code || 'error'} at ${at})`;
}

/**
 * Creates `dir` (absolute) for a run's output and checks that entries can be written in it, or throws
 * OUTPUT_UNWRITABLE naming `key` (the option or config key that chose the folder). It creates the missing
 * levels one at a time: Node's `mkdirSync(..., { recursive: true })` retries forever where mkdir fails with ENOENT
 * under a parent that exists, as it does everywhere in /proc.
 */
export function createOutputDirectory(dir: string, key: string): void {
  const missing: string[] = [];
  let existing = path.resolve(dir);
  for (;;) {
    let stats;
    try {
      stats = statSync(existing);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') throw unwritable(dir, key, reasonOf(error, existing), error);
    }
    if (stats) {
      if (!stats.isDirectory()) throw unwritable(dir, key, `${existing} is a file, not a folder`);
      break;
    }
    missing.unshift(existing);
    const parent = path.dirname(existing);
    if (parent === existing) break;
    existing = parent;
  }
  for (const level of missing) {
    try {
      mkdirSync(level);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && statSync(level).isDirectory()) continue;
      throw unwritable(dir, key, reasonOf(error, path.dirname(level)), error);
    }
  }
  if (missing.length === 0) {
    // An existing folder may still refuse new entries (read-only mounts, /proc, /sys): try one.
    let probe: string;
    try {
      probe = mkdtempSync(path.join(dir, '.drmas-write-check-'));
    } catch (error) {
      throw unwritable(dir, key, reasonOf(error, dir), error);
    }
    rmdirSync(probe);
  }
}
