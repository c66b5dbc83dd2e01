// One `drmas train` in a child process, for the benches that time whole runs (mainJob.mjs, memoryPattern.mjs).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './benchOptions.mjs';
import { median } from './workloads.mjs';

/**
 * Preloaded into the child: at exit it prints the process's CPU time (every thread's, user and system, microseconds),
 * the figure a loaded machine disturbs least.
 */
const CPU_REPORT =
  'data:text/javascript,process.on("exit",()=>{const u=process.cpuUsage();process.stderr.write(`drmas-bench-cpu ${u.user+u.system}\\n`)})';

/**
 * Trains `drmas train --config config ...args` into a scratch run directory (removed after), in the checkout `root`
 * (default this one): the wall seconds, the metrics of its steps, with `median(key)` over them, every line of
 * metrics.jsonl (`lines`, evaluation included) and of eval.jsonl (`evals`), and the process's CPU seconds; undefined (the child's last stderr lines
 * printed, as `label`) when it fails.
 */
export function trainRun(config, args, label, root = REPO_ROOT) {
  const runDir = mkdtempSync(join(tmpdir(), 'drmas-bench-run-'));
  const started = performance.now();
  const child = spawnSync(
    process.execPath,
    ['--import', CPU_REPORT, 'core/bin/drmas.js', 'train', '--config', config, '--run-dir', runDir, ...args],
    {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 1 << 26,
    },
  );
  const wallSeconds = (performance.now() - started) / 1000;
  try {
    if (child.status !== 0) {
      console.error(`bench: ${label} failed (exit ${child.status}): ${(child.stderr || '').trim().split('\n').slice(-3).join(' | ')}`);
      return undefined;
    }
    const jsonLines = (file) =>
      existsSync(join(runDir, file))
        ? readFileSync(join(runDir, file), 'utf8')
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line))
        : [];
    const lines = jsonLines('metrics.jsonl');
    const steps = lines.filter((m) => typeof m['timing/step'] === 'number');
    const evals = jsonLines('eval.jsonl');
    const cpu = /^drmas-bench-cpu (\d+)$/m.exec(child.stderr ?? '');
    const cpuSeconds = cpu ? Number(cpu[1]) / 1e6 : undefined;
    return {
      wallSeconds,
      cpuSeconds,
      steps,
      lines,
      evals,
      median: (key) => median(steps.map((m) => m[key]).filter((v) => typeof v === 'number')),
    };
  } finally {
    rmSync(runDir, { recursive: true, force: true });
  }
}
