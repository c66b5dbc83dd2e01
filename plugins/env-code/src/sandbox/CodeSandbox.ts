/** Languages the sandboxes run: JavaScript in QuickJS (WebAssembly), Python in Pyodide (WebAssembly, in a worker thread). */
export type CodeLanguage = 'javascript' | 'python';

export const CODE_LANGUAGES: readonly CodeLanguage[] = ['javascript', 'python'];

/**
 * One test of a solution, in the form the sandboxes run:
 * - `assert`: a snippet that passes when it raises nothing (`assert f(2) == 5` in Python, `assert(f(2) === 5)` or
 *   `assertEqual(f(2), 5)` in JavaScript). It runs in the judge, an engine that never runs the solution's code: the
 *   names it takes from the solution call the solution's engine, and what they return reaches it as plain data
 *   (see plainData.ts), so nothing the solution defines or replaces decides whether it passes;
 * - `call`: `fn(...args)` must equal `expected`, compared on the host as plain data (numbers within 1e-9);
 * - `stdio`: the solution run as a program on `stdin` must print `stdout` (lines compared with trailing spaces
 *   trimmed). Python reads `input()`/`sys.stdin`; JavaScript reads `readline()` and prints with `console.log`;
 * - `exec`: a snippet run in the solution's own scope after it loads, as a REPL cell; it reports what it printed and
 *   whether it raised. The solution can steer it, so it judges nothing: it is for tools (env-tools' Python REPL).
 *
 * Expected values (`expected`, `stdout`) never enter an engine.
 */
export type CodeTest =
  | { name: string; kind: 'assert'; code: string }
  | { name: string; kind: 'call'; fn: string; args: unknown[]; expected: unknown }
  | { name: string; kind: 'stdio'; stdin: string; stdout: string }
  | { name: string; kind: 'exec'; code: string };

export interface SandboxLimits {
  /** Wall-clock budget of the whole run (the solution and all its tests), in milliseconds. */
  timeoutMs: number;
  /** Memory the guest may allocate, in bytes (QuickJS's runtime limit; the Pyodide heap's growth cap). */
  memoryBytes: number;
  /** Characters of printed output kept per run; the rest is dropped. */
  maxOutputChars: number;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = { timeoutMs: 2000, memoryBytes: 64 * 1024 * 1024, maxOutputChars: 4000 };

export interface SandboxRequest {
  language: CodeLanguage;
  code: string;
  tests: readonly CodeTest[];
  limits?: Partial<SandboxLimits>;
}

export interface TestResult {
  name: string;
  passed: boolean;
  /** Why it failed: the exception (`AssertionError: ...`), `expected 5, got 4`, or the run's status. */
  error?: string;
  /** What the test printed (stdio tests: the program's whole output). */
  stdout?: string;
}

/**
 * `ok`: the solution loaded and every test ran (each passed or failed on its own); `error`: the solution itself
 * did not load (syntax error, exception at top level, no such language); `timeout`: the CPU deadline ended the
 * run; `memory`: the guest ran out of its memory. Tests that did not run are reported failed with the status.
 */
export type SandboxStatus = 'ok' | 'timeout' | 'memory' | 'error';

export interface SandboxRun {
  status: SandboxStatus;
  tests: TestResult[];
  /** The error that ended or prevented the run (status other than ok). */
  error?: string;
  /** What the solution printed while loading. */
  stdout: string;
  durationMs: number;
}

/** Runs untrusted code with its tests: no filesystem, network, processes or host objects; bounded time and memory. */
export interface CodeSandbox {
  run(request: SandboxRequest): Promise<SandboxRun>;
  /** Frees the engine (the Pyodide worker); the sandbox starts a fresh one if used again. */
  dispose(): Promise<void>;
}

export function sandboxLimits(limits: Partial<SandboxLimits> | undefined): SandboxLimits {
  return { ...DEFAULT_SANDBOX_LIMITS, ...limits };
}
