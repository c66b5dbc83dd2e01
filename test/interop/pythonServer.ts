import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

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
 * A real server (vLLM, SkyRL) in its own process group, its output kept for messages; `stop` kills the group (its
 * engine subprocesses too), so no server outlives the test.
 */
export class PythonServer {
  readonly output: string[] = [];
  private readonly child: ChildProcess;

  constructor(command: string, args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string) {
    this.child = spawn(command, args, {
      cwd,
      env: { ...process.env, PYTHONUNBUFFERED: '1', HF_HUB_OFFLINE: '1', DO_NOT_TRACK: '1', ...env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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

  /** Polls `url` until it answers 2xx; fails when the process exits first or `timeoutMs` passes, quoting its output. */
  async waitFor(url: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.exited) throw new Error(`the server exited before answering ${url}:\n${this.tail()}`);
      try {
        if ((await fetch(url, { signal: AbortSignal.timeout(2000) })).ok) return;
      } catch {
        // not up yet
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    throw new Error(`no answer from ${url} within ${timeoutMs} ms:\n${this.tail()}`);
  }

  /** Kills the whole process group and waits for the exit. */
  async stop(): Promise<void> {
    if (this.exited || this.child.pid === undefined) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    process.kill(-this.child.pid, 'SIGKILL');
    await exited;
  }
}
