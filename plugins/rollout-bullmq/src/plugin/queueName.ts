import { createHash } from 'node:crypto';
import path from 'node:path';

/**
 * The queue of a run: named after its run directory's folder and a hash of its absolute path, so two runs never
 * share jobs and a worker given the same run directory finds the same queue.
 */
export function queueNameFor(runDir: string): string {
  const absolute = path.resolve(runDir);
  const folder = path
    .basename(absolute)
    .replace(/[^A-Za-z0-9_.-]/g, '_')
    .slice(0, 60);
  return `rollouts-${folder}-${createHash('sha256').update(absolute).digest('hex').slice(0, 12)}`;
}
