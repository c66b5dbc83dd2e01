import { Worker, type ResourceLimits, type TransferListItem } from 'node:worker_threads';
import type { SandboxStatus } from './CodeSandbox.js';

/** A run the host ended itself: the worker was killed at the hard deadline, died, or never started. */
export interface WorkerEnding {
  ended: SandboxStatus;
  text: string;
}

export interface SandboxWorkerOptions {
  /** The worker's script (plain JavaScript Node can run from the sources as from dist). */
  url: URL;
  /** Names the engine in error texts: `the Python worker failed (...)`. */
  engine: string;
  resourceLimits: ResourceLimits;
  /** A worker not ready after this is reported as failed. */
  startupTimeoutMs: number;
  /** Runs one worker serves before it is replaced. */
  recycleAfter: number;
  /** What the worker is started with, for a given memory allowance (a worker serves one allowance). */
  workerData: (memoryBytes: number) => unknown;
}

export interface WorkerCall<Data> {
  memoryBytes: number;
  message: Record<string, unknown>;
  /** Objects the message hands over (a MessagePort). */
  transfer?: TransferListItem[];
  /** The host's hard deadline: past it the worker is terminated and the run is a timeout. */
  hardDeadlineMs: number;
  /** Called on the worker's data just before the message is sent (Pyodide clears its interrupt flag). */
  beforeSend?: (data: Data) => void;
  /** A softer deadline before the hard one (Pyodide raises KeyboardInterrupt in the guest at it). */
  softDeadline?: { ms: number; action: (data: Data) => void };
}

interface LiveWorker {
  worker: Worker;
  data: unknown;
  ready: Promise<void>;
  runs: number;
  memoryBytes: number;
  exited?: string;
}

/**
 * The worker-thread lifecycle both sandboxes share: one warm worker serving runs one at a time, terminated at a
 * host-side hard deadline (so a guest stuck in one long native call cannot hold the host's thread or overrun its
 * limit), replaced by a fresh one after a kill, a death, a change of memory allowance, or `recycleAfter` runs.
 * The worker answers `{ ready: true }` once loaded, then `{ id, ... }` for each `{ id, ... }` it is sent.
 */
export class SandboxWorker<Data, Reply extends { id?: number }> {
  private live?: LiveWorker;
  private nextId = 0;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: SandboxWorkerOptions) {}

  /** Runs `task` after every earlier one has finished: the one worker serves one run at a time. */
  serialize<T>(task: () => Promise<T>): Promise<T> {
    const next = this.queue.then(task);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Starts the worker ahead of the first run. */
  async warm(memoryBytes: number): Promise<void> {
    await this.workerFor(memoryBytes).ready;
  }

  /** Sends one message and waits for its reply, or for the worker's end (hard deadline, exit, error, failed start). */
  async call(call: WorkerCall<Data>): Promise<{ reply: Reply; durationMs: number } | (WorkerEnding & { durationMs: number })> {
    const live = this.workerFor(call.memoryBytes);
    try {
      await live.ready;
    } catch (error) {
      this.drop(live);
      return {
        ended: 'error',
        text: `error: the ${this.options.engine} sandbox did not start (${(error as Error).message})`,
        durationMs: 0,
      };
    }
    const started = performance.now();
    call.beforeSend?.(live.data as Data);
    const id = this.nextId++;
    live.runs++;
    const outcome = await new Promise<{ reply: Reply } | WorkerEnding>((resolve) => {
      const onMessage = (message: Reply) => {
        if (message.id === id) finish({ reply: message });
      };
      const onError = (error: Error) => finish(this.endedBy(error));
      const onExit = () =>
        finish({ ended: 'error', text: `error: the ${this.options.engine} worker exited (${live.exited ?? 'unexpectedly'})` });
      const hardTimer = setTimeout(
        () => finish({ ended: 'timeout', text: 'timeout: the run exceeded its time limit' }),
        call.hardDeadlineMs,
      );
      const softTimer = call.softDeadline && setTimeout(() => call.softDeadline!.action(live.data as Data), call.softDeadline.ms);
      const finish = (value: { reply: Reply } | WorkerEnding) => {
        clearTimeout(hardTimer);
        clearTimeout(softTimer);
        live.worker.off('message', onMessage);
        live.worker.off('error', onError);
        live.worker.off('exit', onExit);
        resolve(value);
      };
      live.worker.on('message', onMessage);
      live.worker.on('error', onError);
      live.worker.on('exit', onExit);
      live.worker.postMessage({ ...call.message, id }, call.transfer);
    });
    const durationMs = performance.now() - started;
    if ('ended' in outcome) this.drop(live);
    else if (live.runs >= this.options.recycleAfter) this.drop(live);
    return { ...outcome, durationMs };
  }

  /** Sends a message that has no reply to the current worker, if one is running. */
  post(message: Record<string, unknown>): void {
    if (this.live && this.live.exited === undefined) this.live.worker.postMessage(message);
  }

  /** Acts on the current worker's data (Pyodide's interrupt flag), if one is running. */
  signal(action: (data: Data) => void): void {
    if (this.live && this.live.exited === undefined) action(this.live.data as Data);
  }

  /** Calls `listener` if the current worker exits before the returned function is called. */
  onExit(listener: () => void): () => void {
    const worker = this.live?.worker;
    if (!worker || this.live?.exited !== undefined) {
      listener();
      return () => undefined;
    }
    worker.once('exit', listener);
    return () => worker.off('exit', listener);
  }

  /** Replaces the current worker on the next call (its engine reported itself broken). */
  retire(): void {
    if (this.live) this.drop(this.live);
  }

  async dispose(): Promise<void> {
    const live = this.live;
    this.live = undefined;
    if (live) await live.worker.terminate();
  }

  private workerFor(memoryBytes: number): LiveWorker {
    if (this.live && this.live.exited === undefined && this.live.memoryBytes === memoryBytes) return this.live;
    if (this.live) this.drop(this.live);
    const data = this.options.workerData(memoryBytes);
    const worker = new Worker(this.options.url, { workerData: data, resourceLimits: this.options.resourceLimits });
    worker.unref();
    const live: LiveWorker = { worker, data, runs: 0, memoryBytes, ready: Promise.resolve() };
    live.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the ${this.options.engine} engine did not load in time`)),
        this.options.startupTimeoutMs,
      );
      worker.once('message', (message: { ready?: boolean }) => {
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

  /** A worker error: its V8 heap limit (the guest's JavaScript-side memory) or anything else. */
  private endedBy(error: Error & { code?: string }): WorkerEnding {
    if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') return { ended: 'memory', text: 'memory: the run exceeded its memory limit' };
    return { ended: 'error', text: `error: the ${this.options.engine} worker failed (${error.message})` };
  }
}
