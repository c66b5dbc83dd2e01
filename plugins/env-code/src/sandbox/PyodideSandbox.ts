import { Worker } from 'node:worker_threads';
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
  ready?: boolean;
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

interface LiveWorker {
  worker: Worker;
  ready: Promise<void>;
  interrupt: Int32Array;
  runs: number;
  /** The guest's memory allowance the worker was started with (it caps the wasm heap's growth). */
  memoryBytes: number;
  exited?: string;
}

/**
 * Python in Pyodide (CPython compiled to WebAssembly) inside a `worker_threads` Worker, kept warm between runs
 * (loading takes seconds). The deadline first interrupts Python (KeyboardInterrupt, the worker stays warm), then
 * terminates the thread if Python does not stop; the next run starts a fresh worker. How the guest is kept from the
 * host is described in worker/pyodideWorker.mjs and the README.
 */
export class PyodideSandbox implements CodeSandbox {
  private live?: LiveWorker;
  private nextId = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly workerHeapMb: number;
  private readonly recycleAfter: number;

  constructor(options: PyodideSandboxOptions = {}) {
    this.workerHeapMb = options.workerHeapMb ?? 256;
    this.recycleAfter = options.recycleAfter ?? 500;
  }

  /** Runs are served one at a time by the one worker. */
  run(request: SandboxRequest): Promise<SandboxRun> {
    const next = this.queue.then(() => this.runNow(request));
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Starts the worker ahead of the first run (loading Pyodide takes seconds). */
  async warm(memoryBytes = sandboxLimits(undefined).memoryBytes): Promise<void> {
    await this.workerFor(memoryBytes).ready;
  }

  async dispose(): Promise<void> {
    const live = this.live;
    this.live = undefined;
    if (live) await live.worker.terminate();
  }

  private async runNow(request: SandboxRequest): Promise<SandboxRun> {
    const limits = sandboxLimits(request.limits);
    const live = this.workerFor(limits.memoryBytes);
    try {
      await live.ready;
    } catch (error) {
      this.drop(live);
      const text = `error: the Python sandbox did not start (${(error as Error).message})`;
      return { status: 'error', error: text, stdout: '', tests: unrunTests(request.tests, 0, text), durationMs: 0 };
    }
    const started = performance.now();
    Atomics.store(live.interrupt, 0, 0);
    const id = this.nextId++;
    live.runs++;
    const reply = await new Promise<WorkerReply | { ended: SandboxStatus; text: string }>((resolve) => {
      const onMessage = (message: WorkerReply) => {
        if (message.id === id) finish(message);
      };
      const onError = (error: Error) => finish(endedBy(error));
      const onExit = () => finish({ ended: 'error', text: `error: the Python worker exited (${live.exited ?? 'unexpectedly'})` });
      const interruptTimer = setTimeout(() => {
        Atomics.store(live.interrupt, 0, SIGINT);
        killTimer = setTimeout(() => finish({ ended: 'timeout', text: 'timeout: the run exceeded its time limit' }), INTERRUPT_GRACE_MS);
      }, limits.timeoutMs);
      let killTimer: NodeJS.Timeout | undefined;
      const finish = (value: WorkerReply | { ended: SandboxStatus; text: string }) => {
        clearTimeout(interruptTimer);
        clearTimeout(killTimer);
        live.worker.off('message', onMessage);
        live.worker.off('error', onError);
        live.worker.off('exit', onExit);
        resolve(value);
      };
      live.worker.on('message', onMessage);
      live.worker.on('error', onError);
      live.worker.on('exit', onExit);
      live.worker.postMessage({ id, code: request.code, tests: request.tests, maxOutputChars: limits.maxOutputChars });
    });
    const durationMs = performance.now() - started;
    if ('ended' in reply) {
      this.drop(live);
      return { status: reply.ended, error: reply.text, stdout: '', tests: unrunTests(request.tests, 0, reply.text), durationMs };
    }
    if (reply.fatal !== undefined || !reply.result) {
      this.drop(live);
      const text = `error: the Python interpreter failed (${reply.fatal ?? 'no result'})`;
      return { status: 'error', error: text, stdout: '', tests: unrunTests(request.tests, 0, text), durationMs };
    }
    if (live.runs >= this.recycleAfter) this.drop(live);
    return { ...judge(request.tests, reply.result), durationMs };
  }

  private workerFor(memoryBytes: number): LiveWorker {
    if (this.live && this.live.exited === undefined && this.live.memoryBytes === memoryBytes) return this.live;
    if (this.live) this.drop(this.live);
    const interruptBuffer = new SharedArrayBuffer(4);
    const worker = new Worker(WORKER_URL, {
      workerData: { interruptBuffer, memoryBytes },
      resourceLimits: { maxOldGenerationSizeMb: this.workerHeapMb, maxYoungGenerationSizeMb: 32, stackSizeMb: 8 },
    });
    worker.unref();
    const live: LiveWorker = { worker, interrupt: new Int32Array(interruptBuffer), runs: 0, memoryBytes, ready: Promise.resolve() };
    live.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('Pyodide did not load in time')), STARTUP_TIMEOUT_MS);
      worker.once('message', (message: WorkerReply) => {
        clearTimeout(timer);
        if (message.ready) resolve();
        else reject(new Error('unexpected first message'));
      });
      worker.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
    live.ready.catch(() => undefined);
    worker.on('error', (error) => (live.exited ??= error.message));
    worker.on('exit', (code) => (live.exited ??= `exit code ${code}`));
    this.live = live;
    return live;
  }

  private drop(live: LiveWorker): void {
    live.exited ??= 'replaced';
    if (this.live === live) this.live = undefined;
    void live.worker.terminate();
  }
}

/** A worker error: its V8 heap limit (the guest's JavaScript-side memory) or anything else. */
function endedBy(error: Error & { code?: string }): { ended: SandboxStatus; text: string } {
  if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') return { ended: 'memory', text: 'memory: the run exceeded its memory limit' };
  return { ended: 'error', text: `error: the Python worker failed (${error.message})` };
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
