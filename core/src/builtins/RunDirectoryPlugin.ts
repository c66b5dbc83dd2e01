import { appendFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Secrets } from '../secrets/Secrets.js';
import type { ApplyContext } from '../kernel/ApplyContext.js';
import { Stage } from '../kernel/stages.js';
import type { Plugin } from '../plugins/Plugin.js';
import type { RegisterContext } from '../di/RegisterContext.js';
import { allOf } from '../di/Dependencies.js';
import { MetricsSink } from '../services/MetricsSink.js';
import { readTrainerState } from '../checkpoint/checkpointLayout.js';
import { createOutputDirectory } from '../run/outputDirectory.js';
import { RunFile } from '../services/RunFile.js';
import { CORE_RUN_FILES, cutStepLines } from '../run/runFiles.js';
import { RunDirectoryLock } from '../services/RunDirectoryLock.js';
import { acquireRunLock, RUN_LOCK_FILE, type RunLock } from '../run/runLock.js';

const PLUGIN_NAME = 'drmas:run-directory';

/** Appends one JSON object per step to `metrics.jsonl` (written line by line, so a killed run keeps its lines). */
export class JsonlMetricsSink implements MetricsSink {
  constructor(private readonly file: string) {}

  write(record: { step: number; metrics: Record<string, number> }): void {
    appendFileSync(this.file, `${JSON.stringify({ step: record.step, ...record.metrics })}\n`);
  }
}

/** `run.lock` in the run directory: the folder this process writes, held from its claim until released. */
export class RunLockFile implements RunDirectoryLock {
  private held: { runDir: string; lock: RunLock } | undefined;

  claim(runDir: string, key: string, log: (message: string) => void): boolean {
    if (this.held?.runDir === runDir) return false;
    this.release();
    const lock = acquireRunLock(runDir, key);
    if (lock.replaced) {
      const { pid, startedAt } = lock.replaced;
      log(`${RUN_LOCK_FILE}: process ${pid} (started ${startedAt}) no longer runs; its lock is replaced`);
    }
    this.held = { runDir, lock };
    return true;
  }

  release(): void {
    this.held?.lock.release();
    this.held = undefined;
  }
}

/**
 * Holds the run directory for this process (`run.lock`, the `RunDirectoryLock` the kernel claims at setup and
 * releases at shutdown; a failed setup's claim it lets go itself, at `failed`), creates it, writes the resolved config into it (its secret keys redacted) and records metrics to `metrics.jsonl`; on resume,
 * cuts the run's line files (metrics, eval, rollouts) to the checkpoint's step, so the run continues them exactly.
 */
export class RunDirectoryPlugin implements Plugin {
  readonly name = PLUGIN_NAME;
  private runDir: string | undefined;
  private readonly lock = new RunLockFile();

  register(ctx: RegisterContext): void {
    // Steps driven without `setup` (a custom loop calling kernel.step) have no run directory to write to.
    ctx.bind(MetricsSink).toConstantValue({
      write: (record) => {
        if (this.runDir) new JsonlMetricsSink(path.join(this.runDir, 'metrics.jsonl')).write(record);
      },
    });
    for (const file of CORE_RUN_FILES) ctx.bind(RunFile).toConstantValue(file);
    ctx.bind(RunDirectoryLock).toConstantValue(this.lock);
  }

  apply(kernel: ApplyContext): void {
    const services = kernel.inject({ secrets: Secrets, runFiles: allOf(RunFile) });
    kernel.hooks.setup.tapPromise({ name: PLUGIN_NAME, stage: Stage.FIRST }, async (run) => {
      this.runDir = run.runDir;
      createOutputDirectory(run.runDir, run.runDirKey ?? 'trainer.outputDir');
      if (run.resumeFrom) {
        const step = readTrainerState(run.resumeFrom).step;
        for (const { path: name } of services.runFiles.filter((file) => file.kind === 'steps')) {
          const cut = await cutStepLines(path.join(run.runDir, name), step);
          if (cut && (cut.dropped || cut.torn)) {
            run.log(`${name}: kept ${cut.kept} lines up to step ${step}, dropped ${cut.dropped} after it and ${cut.torn} torn`);
          }
        }
      }
      // The user's own config file keeps the credentials; this copy, which reports and archives read, does not.
      writeFileSync(path.join(run.runDir, 'config.json'), `${JSON.stringify(services.secrets.config(), null, 2)}\n`);
    });
    // A setup that failed is never shut down: the folder it claimed is let go here, so the next run may take it.
    kernel.hooks.failed.tap(PLUGIN_NAME, (_error, phase) => {
      if (phase === 'setup') this.lock.release();
    });
  }
}
