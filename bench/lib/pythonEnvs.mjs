// The Python environments scripts/python-env.sh makes (scripts/python/<name>.txt), for the benchmarks that run
// Python: its `--list` says where each one is, by the same path rule test/support/pythonEnv.ts follows.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './benchOptions.mjs';

/** The python of the environment `name`, or undefined when it is not installed (`bash scripts/python-env.sh name`). */
export function pythonOfEnv(name) {
  const listed = spawnSync('bash', ['scripts/python-env.sh', '--list'], { cwd: REPO_ROOT, encoding: 'utf8' });
  const prefix = `${name}: installed `;
  const line = (listed.stdout ?? '').split('\n').find((l) => l.startsWith(prefix));
  return line ? join(line.slice(prefix.length), 'bin', 'python') : undefined;
}
