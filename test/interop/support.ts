import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { REPO_ROOT } from '../support/tempProject.js';

/** The folder of this suite's Python scripts. */
export const PYTHON_SCRIPTS = path.join(REPO_ROOT, 'test', 'interop', 'python');

/** Environment for Python children: no hub, no telemetry, quiet transformers. */
export const PYTHON_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  HF_HUB_OFFLINE: '1',
  TRANSFORMERS_VERBOSITY: 'error',
  TOKENIZERS_PARALLELISM: 'false',
  WANDB_MODE: 'offline',
  MLFLOW_ENABLE_TELEMETRY: 'false',
  DO_NOT_TRACK: '1',
  PYTHONUNBUFFERED: '1',
};

/** Runs `script` (in test/interop/python) with `python`; its stdout parsed as JSON, or an error quoting its stderr. */
export function runPython<T>(python: string, script: string, args: string[], env: NodeJS.ProcessEnv = {}): T {
  const result = spawnSync(python, [path.join(PYTHON_SCRIPTS, script), ...args], {
    encoding: 'utf8',
    env: { ...PYTHON_ENV, ...env },
    maxBuffer: 1 << 30,
  });
  if (result.status !== 0) throw new Error(`${script} exited ${result.status}:\n${result.stderr.slice(-4000)}`);
  return JSON.parse(result.stdout) as T;
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/**
 * A long-running server (mlflow, tensorboard, vLLM, SkyRL) in its own process group, its output kept for messages;
 * `stop` kills the group (its workers and engine subprocesses too), so no server outlives the test.
 */
export class ServerProcess {
  readonly output: string[] = [];
  private readonly child: ChildProcess;

  constructor(command: string, args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string) {
    this.child = spawn(command, args, { cwd, env: { ...PYTHON_ENV, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    for (const stream of [this.child.stdout!, this.child.stderr!])
      stream.on('data', (chunk: Buffer) => this.output.push(chunk.toString('utf8')));
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** The last `chars` of its output. */
  tail(chars = 3000): string {
    return this.output.join('').slice(-chars);
  }

  /** Polls `url` until it answers 2xx, the process exits, or `timeoutMs` passes. */
  async waitFor(url: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.exited) throw new Error(`the server exited before answering ${url}:\n${this.tail()}`);
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
        if (response.ok) return;
      } catch {
        // not up yet
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`no answer from ${url} within ${timeoutMs} ms:\n${this.tail()}`);
  }

  /** SIGKILLs the whole process group (mlflow's gunicorn/uvicorn workers too) and waits for the exit. */
  async stop(): Promise<void> {
    if (this.exited || this.child.pid === undefined) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    process.kill(-this.child.pid, 'SIGKILL');
    await exited;
  }
}
