import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { PassThrough } from 'node:stream';
import path from 'node:path';
import { main, type CliCommand } from '@drmas/core';
import { REPO_ROOT } from './tempProject.js';

/** What `drmas info --json` prints: core's own type, which its package entry does not export. */
export type { InfoReport } from '../../core/src/cli/commands/info.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function collect(stream: PassThrough): () => string {
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  return () => Buffer.concat(chunks).toString('utf8');
}

/** Runs the CLI in this process (fast; for most tests); `commands` replaces the built-in ones. */
export async function runCli(args: string[], cwd = REPO_ROOT, commands?: readonly CliCommand[]): Promise<CliResult> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out = collect(stdout);
  const err = collect(stderr);
  const code = await main(args, { stdout, stderr, cwd }, commands);
  return { code, stdout: out(), stderr: err() };
}

/** Runs `node args...` in a child process in `cwd`, with no flags and no NODE_OPTIONS, as a user's shell would. */
export function runNode(args: string[], cwd: string, timeoutMs = 120_000): CliResult {
  const result = spawnSync(process.execPath, args, {
    cwd,
    encoding: 'utf8',
    timeout: timeoutMs,
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

/** Runs the built `drmas` bin in a child process, exactly as a user would (needs `npm run build`). */
export function runBin(args: string[], cwd = REPO_ROOT, timeoutMs = 120_000): CliResult {
  return runNode([path.join(REPO_ROOT, 'core', 'bin', 'drmas.js'), ...args], cwd, timeoutMs);
}

/** A `drmas` child process left running (a rollout worker, a training run next to its workers). */
export interface BinProcess {
  child: ChildProcess;
  /** Standard output and error so far, interleaved. */
  output(): string;
  /** Resolves once `text` appears in the output (rejects when the process exits first, or after `timeoutMs`). */
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<void>;
  exited: Promise<CliResult>;
}

/** Starts the built `drmas` bin in a child process without waiting for it (as a user's second terminal would). */
export function startBin(args: string[], cwd = REPO_ROOT): BinProcess {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'core', 'bin', 'drmas.js'), ...args], {
    cwd,
    env: { ...process.env, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let both = '';
  child.stdout.on('data', (chunk: Buffer) => ((stdout += chunk.toString()), (both += chunk.toString())));
  child.stderr.on('data', (chunk: Buffer) => ((stderr += chunk.toString()), (both += chunk.toString())));
  const exited = new Promise<CliResult>((resolve) =>
    child.once('close', (code, signal) => resolve({ code: code ?? (signal ? -1 : 0), stdout, stderr })),
  );
  const found = (text: string | RegExp) => (typeof text === 'string' ? both.includes(text) : text.test(both));
  return {
    child,
    output: () => both,
    exited,
    waitFor: (text, timeoutMs = 120_000) =>
      new Promise<void>((resolve, reject) => {
        const poll = setInterval(() => {
          if (found(text)) finish();
          else if (child.exitCode !== null || child.signalCode !== null)
            finish(new Error(`drmas exited before printing ${String(text)}:\n${both}`));
        }, 50);
        const timer = setTimeout(() => finish(new Error(`no ${String(text)} from drmas in ${timeoutMs} ms:\n${both}`)), timeoutMs);
        function finish(error?: Error) {
          clearInterval(poll);
          clearTimeout(timer);
          if (error) reject(error);
          else resolve();
        }
      }),
  };
}
