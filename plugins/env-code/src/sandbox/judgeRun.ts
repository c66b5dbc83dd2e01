import type { CodeTest, SandboxRun, SandboxStatus, TestResult } from './CodeSandbox.js';
import { callMismatch, stdoutMismatch } from './compareOutputs.js';

/** A test as an engine gets it: its position in the request, and no expected value (`expected`, `stdout` stay here). */
export type EngineTest =
  | { index: number; name: string; kind: 'assert' | 'exec'; code: string }
  | { index: number; name: string; kind: 'call'; fn: string; args: unknown[] }
  | { index: number; name: string; kind: 'stdio'; stdin: string };

/**
 * What an engine saw of one test: the plain-data text of the value a `call` returned (plainData.ts), the error the
 * test raised, and what it printed. A test without an observation did not run.
 */
export interface EngineObservation {
  index: number;
  value?: string;
  error?: string;
  stdout?: string;
}

/** An engine's report of a run: how it ended, what the solution printed while loading, what it saw of each test. */
export interface EngineRun {
  status: SandboxStatus;
  error?: string;
  stdout: string;
  tests: EngineObservation[];
}

/** A run an engine did not answer (the host ended it, or the engine failed): every test fails with `error`. */
export function unanswered(status: SandboxStatus, error: string): EngineRun {
  return { status, error, stdout: '', tests: [] };
}

export function engineTests(tests: readonly CodeTest[]): EngineTest[] {
  return tests.map((test, index): EngineTest => {
    switch (test.kind) {
      case 'call':
        return { index, name: test.name, kind: test.kind, fn: test.fn, args: test.args };
      case 'stdio':
        return { index, name: test.name, kind: test.kind, stdin: test.stdin };
      default:
        return { index, name: test.name, kind: test.kind, code: test.code };
    }
  });
}

/**
 * The verdict on a run, made here on the host from what the engines saw: a `call` test passes when the value it
 * returned equals `expected` as plain data, a `stdio` test when its output matches, an `assert` or `exec` test when it
 * raised nothing; a test the engines left unanswered fails with the run's error.
 */
export function judgeRun(tests: readonly CodeTest[], run: EngineRun): Omit<SandboxRun, 'durationMs'> {
  const observed = new Map<number, EngineObservation>();
  for (const observation of run.tests) if (!observed.has(observation.index)) observed.set(observation.index, observation);
  const reason = run.error ?? 'not run';
  const results = tests.map((test, index): TestResult => {
    const got = observed.get(index);
    if (!got) return { name: test.name, passed: false, error: reason };
    let error = got.error;
    if (error === undefined && test.kind === 'call')
      error = got.value === undefined ? 'no value was reported' : callMismatch(got.value, test.expected);
    if (error === undefined && test.kind === 'stdio') error = stdoutMismatch(got.stdout ?? '', test.stdout);
    return {
      name: test.name,
      passed: error === undefined,
      ...(error === undefined ? {} : { error }),
      ...(got.stdout ? { stdout: got.stdout } : {}),
    };
  });
  return { status: run.status, ...(run.error ? { error: run.error } : {}), stdout: run.stdout, tests: results };
}
