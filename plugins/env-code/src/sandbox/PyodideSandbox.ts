import {
  sandboxLimits,
  unrunTests,
  type CodeSandbox,
  type CodeTest,
  type SandboxRequest,
  type SandboxRun,
  type SandboxStatus,
  type TestResult,
} from './CodeSandbox.js';
import { callMismatch, stdoutMismatch } from './compareOutputs.js';
import { SandboxWorker } from './SandboxWorker.js';

/** The worker script: plain JavaScript beside src/ and dist/, so the same file serves both. */
const WORKER_URL = new URL('../../worker/pyodideWorker.mjs', import.meta.url);

/** How long Python gets to stop after the interrupt at its deadline before its thread is terminated. */
const INTERRUPT_GRACE_MS = 1000;
/** Loading Pyodide takes a few seconds; a worker that is not ready after this is reported as failed. */
const STARTUP_TIMEOUT_MS = 60_000;
const SIGINT = 2;

export interface PyodideSandboxOptions {
  /** Limit of the worker thread's own V8 heap (Pyodide's JavaScript side), in MB. */
  workerHeapMb?: number;
  /**
   * Runs one worker serves before it is replaced. Each run starts from a restored interpreter state (builtins,
   * modules, sys, environment, files); replacing the worker now and then also clears what a guest might have
   * changed deeper inside the interpreter (see the README).
   */
  recycleAfter?: number;
}

interface WorkerReply {
  id?: number;
  result?: GuestRun;
  fatal?: string;
}

/** What the Python harness reports; the host judges `call` and `stdio` tests from `actual` and `stdout`. */
interface GuestRun {
  status: SandboxStatus;
  error: string | null;
  stdout: string;
  tests: Array<{ name: string; error?: string; actual?: string; stdout?: string }>;
}

interface PyodideWorkerData {
  interruptBuffer: SharedArrayBuffer;
  memoryBytes: number;
}

/**
 * Python in Pyodide (CPython compiled to WebAssembly) inside a `worker_threads` Worker, kept warm between runs
 * (loading takes seconds). The deadline first interrupts Python (KeyboardInterrupt, the worker stays warm), then
 * terminates the thread if Python does not stop; the next run starts a fresh worker. How the guest is kept from the
 * host is described in worker/pyodideWorker.mjs and the README.
 */
export class PyodideSandbox implements CodeSandbox {
  private readonly worker: SandboxWorker<PyodideWorkerData, WorkerReply>;

  constructor(options: PyodideSandboxOptions = {}) {
    this.worker = new SandboxWorker({
      url: WORKER_URL,
      engine: 'Python',
      resourceLimits: { maxOldGenerationSizeMb: options.workerHeapMb ?? 256, maxYoungGenerationSizeMb: 32, stackSizeMb: 8 },
      startupTimeoutMs: STARTUP_TIMEOUT_MS,
      recycleAfter: options.recycleAfter ?? 500,
      workerData: (memoryBytes): PyodideWorkerData => ({ interruptBuffer: new SharedArrayBuffer(4), memoryBytes }),
    });
  }

  /** Runs are served one at a time by the one worker. */
  run(request: SandboxRequest): Promise<SandboxRun> {
    return this.worker.serialize(() => this.runNow(request));
  }

  /** Starts the worker ahead of the first run (loading Pyodide takes seconds). */
  async warm(memoryBytes = sandboxLimits(undefined).memoryBytes): Promise<void> {
    await this.worker.warm(memoryBytes);
  }

  async dispose(): Promise<void> {
    await this.worker.dispose();
  }

  private async runNow(request: SandboxRequest): Promise<SandboxRun> {
    const limits = sandboxLimits(request.limits);
    const outcome = await this.worker.call({
      memoryBytes: limits.memoryBytes,
      message: { code: request.code, tests: request.tests, maxOutputChars: limits.maxOutputChars },
      hardDeadlineMs: limits.timeoutMs + INTERRUPT_GRACE_MS,
      beforeSend: (data) => Atomics.store(new Int32Array(data.interruptBuffer), 0, 0),
      softDeadline: { ms: limits.timeoutMs, action: (data) => Atomics.store(new Int32Array(data.interruptBuffer), 0, SIGINT) },
    });
    const { durationMs } = outcome;
    if ('ended' in outcome) {
      return { status: outcome.ended, error: outcome.text, stdout: '', tests: unrunTests(request.tests, 0, outcome.text), durationMs };
    }
    const reply = outcome.reply;
    if (reply.fatal !== undefined || !reply.result) {
      this.worker.retire();
      const text = `error: the Python interpreter failed (${reply.fatal ?? 'no result'})`;
      return { status: 'error', error: text, stdout: '', tests: unrunTests(request.tests, 0, text), durationMs };
    }
    return { ...judge(request.tests, reply.result), durationMs };
  }
}

/** The run's results from the harness's report: `call` values and `stdio` output compared here, for both sandboxes alike. */
function judge(tests: readonly CodeTest[], guest: GuestRun): Omit<SandboxRun, 'durationMs'> {
  const reported = new Map(guest.tests.map((t) => [t.name, t]));
  const reason = guest.error ?? 'not run';
  const results: TestResult[] = tests.map((test) => {
    const got = reported.get(test.name);
    if (!got) return { name: test.name, passed: false, error: reason };
    let error = got.error;
    if (error === undefined && test.kind === 'call') error = callMismatch(got.actual ?? 'null', test.expected);
    if (error === undefined && test.kind === 'stdio') error = stdoutMismatch(got.stdout ?? '', test.stdout);
    return {
      name: test.name,
      passed: error === undefined,
      ...(error === undefined ? {} : { error }),
      ...(got.stdout ? { stdout: got.stdout } : {}),
    };
  });
  return { status: guest.status, ...(guest.error ? { error: guest.error } : {}), stdout: guest.stdout, tests: results };
}
