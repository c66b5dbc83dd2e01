import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A throwaway redis-server on loopback: no persistence, its own folder, stopped by `stop()`. */
export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** Why Redis tests skip where `redis-server` is absent, naming what installs it. */
export const REDIS_MISSING =
  'redis-server is not installed: the tests that need Redis skip (install it with scripts/install-test-deps.sh, or apt-get install redis-server)';

/** Whether `redis-server` can run here. */
export function redisAvailable(): boolean {
  return spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).status === 0;
}

/** A port nothing listens on now (the OS's pick); redis-server takes a fixed port, not 0. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Starts redis-server on a free loopback port and resolves once it accepts connections. */
export async function startRedis(): Promise<RedisServer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'drmas-redis-'));
  const port = await freePort();
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start on port ${port} in 10 s:\n${output}`)), 10_000);
    const poll = setInterval(() => {
      if (output.includes('Ready to accept connections')) {
        clearInterval(poll);
        clearTimeout(timer);
        resolve();
      }
    }, 20);
    child.once('exit', (code) => {
      clearInterval(poll);
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${code}) on port ${port}:\n${output}`));
    });
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
