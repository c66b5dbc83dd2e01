import { createToken } from '../di/Token.js';

/**
 * This process's hold on the run directory it writes, from `setup` (or `run`, which claims before it moves an earlier
 * run aside) to `shutdown`: RUN_DIR_IN_USE while another drmas process holds it. The kernel claims and releases at
 * those points; the run-directory plugin provides it (with `run.lock`), so a kernel without that plugin (a custom
 * loop, a test) writes no run directory and claims none.
 */
export interface RunDirectoryLock {
  /**
   * Claims `runDir` (absolute) for this process, saying through `log` when it replaces a killed run's lock; `key` is
   * the config key or option that named the folder, for messages. Returns whether this call claimed it: false when
   * this process holds it already. A claim of another folder releases the one held.
   */
  claim(runDir: string, key: string, log: (message: string) => void): boolean;
  /** Releases the folder held, if any. */
  release(): void;
}
export const RunDirectoryLock = createToken<RunDirectoryLock>('RunDirectoryLock', { label: 'run directory lock' });
