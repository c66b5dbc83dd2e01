// One `drmas train` in a child process, for the benches that time whole runs (mainJob.mjs, memoryPattern.mjs).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './benchOptions.mjs';
import { median } from './workloads.mjs';

/**
 * Trains `drmas train --config config ...args` into a scratch run directory (removed after): the wall seconds and the
 * metrics of its steps, with `median(key)` over them; undefined (the child's last stderr lines printed, as `label`)
 * when it fails.
 */
export function trainRun(config, args, label) {
  const runDir = mkdtempSync(join(tmpdir(), 'drmas-bench-run-'));
  const started = performance.now();
  const child = spawnSync(process.execPath, ['core/bin/drmas.js', 'train', '--config', config, '--run-dir', runDir, ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  const wallSeconds = (performance.now() - started) / 1000;
  try {
    if (child.status !== 0) {
      console.error(`bench: ${label} failed (exit ${child.status}): ${(child.stderr || '').trim().split('\n').slice(-3).join(' | ')}`);
      return undefined;
    }
    const steps = readFileSync(join(runDir, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((m) => typeof m['timing/step'] === 'number');
    return { wallSeconds, steps, median: (key) => median(steps.map((m) => m[key]).filter((v) => typeof v === 'number')) };
  } finally {
    rmSync(runDir, { recursive: true, force: true });
  }
}
