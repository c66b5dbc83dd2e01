import { sandboxLimits, type CodeSandbox, type SandboxRequest, type SandboxRun } from './CodeSandbox.js';
import { engineTests, judgeRun, unanswered, type EngineRun } from './judgeRun.js';
import { SandboxWorker } from './SandboxWorker.js';

/**
 * The worker script, compiled: from src/sandbox/ (under jest) and from dist/sandbox/ alike this names
 * dist/sandbox/quickJsWorker.js, so the package must be built (`npx tsc -b`) before the sandbox runs.
 */
const WORKER_URL = new URL('../../dist/sandbox/quickJsWorker.js', import.meta.url);

/**
 * How long past its limit a run may go before its thread is terminated. QuickJS's interrupt handler ends ordinary
 * code at the limit; this catches one long native call (a huge concat, fill or repeat) that never reaches it.
 */
export const QUICKJS_KILL_GRACE_MS = 250;
/** Loading the QuickJS wasm module in a fresh worker takes tens of milliseconds; minutes mean something is broken. */
const STARTUP_TIMEOUT_MS = 60_000;

interface WorkerReply {
  id?: number;
  result?: EngineRun;
  fatal?: string;
}

/**
 * JavaScript in QuickJS compiled to WebAssembly (quickjs-emscripten), run in a warm `worker_threads` Worker: a
 * separate engine with its own heap, so no host object exists in the guest unless defined (only `console` and
 * `readline`, which copy strings; see runInQuickJs.ts). The in-guest interrupt handler and memory limit end a run
 * first; the host terminates the worker at the limit plus a grace (one long native call never reaches the interrupt
 * handler), so the host's event loop never waits on the guest and the next run starts a fresh worker. The worker
 * reports what it saw (values as plain data, errors, output; `assert` tests run in a judge runtime of their own) and
 * the verdict is made here, on the host: the tests' expected values never reach the worker.
 */
export class QuickJsSandbox implements CodeSandbox {
  private readonly worker = new SandboxWorker<unknown, WorkerReply>({
    url: WORKER_URL,
    engine: 'JavaScript',
    resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
    startupTimeoutMs: STARTUP_TIMEOUT_MS,
    recycleAfter: 5000,
    // The guest's memory limit is set per run inside the worker: one worker serves every allowance.
    workerData: () => ({}),
  });

  /** Runs are served one at a time by the one worker. */
  run(request: SandboxRequest): Promise<SandboxRun> {
    return this.worker.serialize(() => this.runNow(request));
  }

  /** Starts the worker ahead of the first run. */
  async warm(): Promise<void> {
    await this.worker.warm(0);
  }

  async dispose(): Promise<void> {
    await this.worker.dispose();
  }

  private async runNow(request: SandboxRequest): Promise<SandboxRun> {
    const limits = sandboxLimits(request.limits);
    const outcome = await this.worker.call({
      memoryBytes: 0,
      message: { code: request.code, tests: engineTests(request.tests), limits },
      hardDeadlineMs: limits.timeoutMs + QUICKJS_KILL_GRACE_MS,
    });
    const { durationMs } = outcome;
    if ('ended' in outcome) return { ...judgeRun(request.tests, unanswered(outcome.ended, outcome.text)), durationMs };
    const { result, fatal } = outcome.reply;
    if (fatal !== undefined || !result) {
      this.worker.retire();
      const text = `error: the QuickJS engine failed (${fatal ?? 'no result'})`;
      return { ...judgeRun(request.tests, unanswered('error', text)), durationMs };
    }
    return { ...judgeRun(request.tests, result), durationMs };
  }
}
