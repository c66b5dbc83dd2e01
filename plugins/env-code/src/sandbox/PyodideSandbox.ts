import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { sandboxLimits, type CodeSandbox, type SandboxLimits, type SandboxRequest, type SandboxRun } from './CodeSandbox.js';
import { engineTests, judgeRun, unanswered, type EngineObservation, type EngineRun, type EngineTest } from './judgeRun.js';
import { SandboxWorker, type WorkerEnding } from './SandboxWorker.js';

/** The worker script: plain JavaScript beside src/ and dist/, so the same file serves both. */
const WORKER_URL = new URL('../../worker/pyodideWorker.mjs', import.meta.url);

/** How long Python gets to stop after the interrupt at its deadline before its thread is terminated. */
const INTERRUPT_GRACE_MS = 1000;
/** Loading Pyodide takes a few seconds; a worker that is not ready after this is reported as failed. */
const STARTUP_TIMEOUT_MS = 60_000;
const SIGINT = 2;

export interface PyodideSandboxOptions {
  /** Limit of each worker thread's own V8 heap (Pyodide's JavaScript side), in MB. */
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
  result?: EngineRun & { retire?: boolean };
  fatal?: string;
}

interface PyodideWorkerData {
  role: 'solution' | 'judge';
  interruptBuffer: SharedArrayBuffer;
  memoryBytes: number;
}

type PyodideWorker = SandboxWorker<PyodideWorkerData, WorkerReply>;

/** A run's outcome in one worker: what it saw, or how the host ended it. */
type Leg = { run: EngineRun; durationMs: number };

const interrupt = (data: PyodideWorkerData) => Atomics.store(new Int32Array(data.interruptBuffer), 0, SIGINT);
const clearInterrupt = (data: PyodideWorkerData) => Atomics.store(new Int32Array(data.interruptBuffer), 0, 0);

/**
 * Python in Pyodide (CPython compiled to WebAssembly) inside `worker_threads` Workers, kept warm between runs
 * (loading takes seconds). Two interpreters serve a sandbox: the solution's, which loads the code and runs its `call`,
 * `exec` and `stdio` tests, and the judge's, which runs the `assert` tests and never runs a solution's code, asking
 * the solution's interpreter for the names the tests use (plain data or references, see worker/python/judge.py).
 * Whatever a solution does to its interpreter, it can only choose the values it returns: the expected values never
 * reach it and the verdict is made here (judgeRun.ts) or in the judge. The deadline first interrupts Python
 * (KeyboardInterrupt, the workers stay warm), then terminates a thread that does not stop; the next run starts a
 * fresh worker. How the guest is kept from the host is described in worker/pyodideWorker.mjs and the README.
 */
export class PyodideSandbox implements CodeSandbox {
  private readonly solution: PyodideWorker;
  private readonly judge: PyodideWorker;

  constructor(options: PyodideSandboxOptions = {}) {
    const worker = (role: PyodideWorkerData['role']): PyodideWorker =>
      new SandboxWorker({
        url: WORKER_URL,
        engine: 'Python',
        resourceLimits: { maxOldGenerationSizeMb: options.workerHeapMb ?? 256, maxYoungGenerationSizeMb: 32, stackSizeMb: 8 },
        startupTimeoutMs: STARTUP_TIMEOUT_MS,
        recycleAfter: options.recycleAfter ?? 500,
        workerData: (memoryBytes): PyodideWorkerData => ({ role, interruptBuffer: new SharedArrayBuffer(4), memoryBytes }),
      });
    this.solution = worker('solution');
    this.judge = worker('judge');
  }

  /** Runs are served one at a time by the two workers. */
  run(request: SandboxRequest): Promise<SandboxRun> {
    return this.solution.serialize(() => this.runNow(request));
  }

  /** Starts both workers ahead of the first run (loading Pyodide takes seconds). */
  async warm(memoryBytes = sandboxLimits(undefined).memoryBytes): Promise<void> {
    await Promise.all([this.solution.warm(memoryBytes), this.judge.warm(memoryBytes)]);
  }

  async dispose(): Promise<void> {
    await Promise.all([this.solution.dispose(), this.judge.dispose()]);
  }

  private async runNow(request: SandboxRequest): Promise<SandboxRun> {
    const limits = sandboxLimits(request.limits);
    const tests = engineTests(request.tests);
    const judged = tests.filter((t) => t.kind === 'assert');
    const own = tests.filter((t) => t.kind !== 'assert');
    if (judged.length === 0) {
      const { run, durationMs } = await this.runSolution(own, request.code, limits);
      return { ...judgeRun(request.tests, run), durationMs };
    }
    // The judge must be loaded before the run's clock starts: its start takes seconds.
    await this.judge.warm(limits.memoryBytes).catch(() => undefined);
    const channel = new MessageChannel();
    const flag = new Int32Array(new SharedArrayBuffer(8));
    const first = await this.runSolution(own, request.code, limits, { port: channel.port1, flag });
    if (first.run.status !== 'ok') {
      channel.port2.close();
      return { ...judgeRun(request.tests, first.run), durationMs: first.durationMs };
    }
    const second = await this.runJudge(judged, limits, limits.timeoutMs - first.durationMs, { port: channel.port2, flag });
    const run: EngineRun = {
      status: second.run.status,
      ...(second.run.error ? { error: second.run.error } : {}),
      stdout: first.run.stdout,
      tests: [...first.run.tests, ...second.run.tests],
    };
    return { ...judgeRun(request.tests, run), durationMs: first.durationMs + second.durationMs };
  }

  /**
   * The solution's interpreter loads the code and runs its own tests. With `link`, it keeps the solution loaded and
   * answers the judge on `link.port` until the judge's part of the run is over.
   */
  private async runSolution(
    tests: EngineTest[],
    code: string,
    limits: SandboxLimits,
    link?: { port: MessagePort; flag: Int32Array },
  ): Promise<Leg> {
    const outcome = await this.solution.call({
      memoryBytes: limits.memoryBytes,
      message: { op: 'run', code, tests, maxOutputChars: limits.maxOutputChars, ...(link ? { link } : {}) },
      transfer: link ? [link.port] : [],
      hardDeadlineMs: limits.timeoutMs + INTERRUPT_GRACE_MS,
      beforeSend: clearInterrupt,
      softDeadline: { ms: limits.timeoutMs, action: interrupt },
    });
    return this.leg(this.solution, outcome, own(tests));
  }

  /**
   * The judge runs the `assert` tests within what is left of the run's time; the solution's interpreter, still
   * answering it, is interrupted at the same deadline. The solution's worker is replaced when it stopped answering
   * or died; otherwise it is told the run is over (its state is restored).
   */
  private async runJudge(
    tests: EngineTest[],
    limits: SandboxLimits,
    leftMs: number,
    link: { port: MessagePort; flag: Int32Array },
  ): Promise<Leg> {
    const remaining = Math.max(0, leftMs);
    const stopSolution = setTimeout(() => this.solution.signal(interrupt), remaining);
    const stopWatching = this.solution.onExit(() => {
      Atomics.store(link.flag, 1, 1);
      Atomics.add(link.flag, 0, 1);
      Atomics.notify(link.flag, 0);
    });
    const outcome = await this.judge.call({
      memoryBytes: limits.memoryBytes,
      message: { op: 'judge', tests, maxOutputChars: limits.maxOutputChars, link: { ...link, deadline: Date.now() + remaining } },
      transfer: [link.port],
      hardDeadlineMs: remaining + INTERRUPT_GRACE_MS,
      beforeSend: clearInterrupt,
      softDeadline: { ms: remaining, action: interrupt },
    });
    clearTimeout(stopSolution);
    stopWatching();
    const leg = this.leg(this.judge, outcome, own(tests));
    if ('ended' in outcome || !outcome.reply.result || outcome.reply.result.retire) this.solution.retire();
    else this.solution.post({ op: 'end' });
    return leg;
  }

  /** A worker's reply as a leg of the run; only observations of the tests it was given count. */
  private leg(
    worker: PyodideWorker,
    outcome: ({ reply: WorkerReply } | WorkerEnding) & { durationMs: number },
    given: (observation: EngineObservation) => boolean,
  ): Leg {
    const { durationMs } = outcome;
    if ('ended' in outcome) return { run: unanswered(outcome.ended, outcome.text), durationMs };
    const { result, fatal } = outcome.reply;
    if (fatal !== undefined || !result) {
      worker.retire();
      const text = `error: the Python interpreter failed (${fatal ?? 'no result'})`;
      return { run: unanswered('error', text), durationMs };
    }
    const run: EngineRun = {
      status: result.status,
      ...(result.error ? { error: result.error } : {}),
      stdout: typeof result.stdout === 'string' ? result.stdout : '',
      tests: Array.isArray(result.tests) ? result.tests.filter(given) : [],
    };
    return { run, durationMs };
  }
}

/** Observations that belong to the given tests (a worker's report is not trusted to stay within them). */
function own(tests: EngineTest[]): (observation: EngineObservation) => boolean {
  const indices = new Set(tests.map((t) => t.index));
  return (observation) => indices.has(observation.index);
}
