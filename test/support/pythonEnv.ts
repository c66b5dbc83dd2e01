import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT as REPO } from './tempProject.js';

/** The folder scripts/python-env.sh makes the environment `name` in (the same rule: requirements file's sha256). */
export function pythonEnvDir(name: string): string {
  const requirements = readFileSync(join(REPO, 'scripts', 'python', `${name}.txt`));
  const home = process.env.DRMAS_PYTHON_HOME ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'drmas', 'python');
  return join(home, `${name}-${createHash('sha256').update(requirements).digest('hex').slice(0, 12)}`);
}

/**
 * The environment's python, or why a test needing it skips: made by `bash scripts/python-env.sh <name>` (which
 * `npm run test:interop` and .ci/run call), never by a test.
 */
export function pythonEnv(name: string): { python: string } | { skip: string } {
  const dir = pythonEnvDir(name);
  if (existsSync(join(dir, '.drmas-complete'))) return { python: join(dir, 'bin', 'python') };
  return { skip: `the Python environment "${name}" is not installed (${dir}): run bash scripts/python-env.sh ${name}` };
}
