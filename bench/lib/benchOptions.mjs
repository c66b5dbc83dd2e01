// Command-line options and paths the benchmark scripts share.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export const BENCH_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
export const REPO_ROOT = join(BENCH_DIR, '..');

/** `--rounds N` (default 3), `--models a,b` (default tiny,small) and the script's own string options. */
export function benchOptions(extra = {}) {
  const { values } = parseArgs({
    options: { rounds: { type: 'string', default: '3' }, models: { type: 'string', default: 'tiny,small' }, ...extra },
    strict: false,
  });
  return { ...values, rounds: Number(values.rounds), models: String(values.models).split(',') };
}
