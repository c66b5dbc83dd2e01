import {
  shouldInterruptAfterDeadline,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSWASMModule,
} from 'quickjs-emscripten';
import {
  sandboxLimits,
  unrunTests,
  type CodeTest,
  type SandboxLimits,
  type SandboxRequest,
  type SandboxRun,
  type SandboxStatus,
  type TestResult,
} from './CodeSandbox.js';
import { callMismatch, stdoutMismatch } from './compareOutputs.js';

/** QuickJS's own stack limit: deep recursion ends in a catchable error long before the wasm stack runs out. */
const MAX_STACK_BYTES = 256 * 1024;

/** Helpers every solution and test sees; everything else in the guest's global scope is QuickJS's own built-ins. */
const GUEST_PRELUDE = `
function assert(condition, message) {
  if (!condition) throw new Error(message === undefined ? 'assertion failed' : String(message));
}
function assertEqual(actual, expected, message) {
  const a = JSON.stringify(actual), e = JSON.stringify(expected);
  if (a !== e) throw new Error((message === undefined ? '' : String(message) + ': ') + 'expected ' + e + ', got ' + a);
}
`;

/** An error the guest threw, as text, and whether it was the deadline or the memory limit. */
interface GuestFailure {
  text: string;
  status: SandboxStatus;
}

class RunStop extends Error {
  constructor(readonly failure: GuestFailure) {
    super(failure.text);
  }
}

/**
 * Runs one request in a fresh QuickJS runtime of `module` (memory limit, stack limit, an interrupt handler for the
 * deadline), disposed after, so nothing a run changes (prototypes, globals) reaches the next. `moduleBroken`: the
 * runtime failed its disposal (left mid-allocation by the memory limit), so the wasm instance must be dropped.
 */
export function runInQuickJs(
  module: QuickJSWASMModule,
  request: SandboxRequest,
): { result: Omit<SandboxRun, 'durationMs'>; moduleBroken: boolean } {
  const limits = sandboxLimits(request.limits);
  const runtime = module.newRuntime();
  runtime.setMemoryLimit(limits.memoryBytes);
  runtime.setMaxStackSize(MAX_STACK_BYTES);
  runtime.setInterruptHandler(shouldInterruptAfterDeadline(Date.now() + limits.timeoutMs));
  let result: Omit<SandboxRun, 'durationMs'>;
  let moduleBroken = false;
  try {
    result = runAll(runtime, request, limits);
  } finally {
    try {
      runtime.dispose();
    } catch {
      moduleBroken = true;
    }
  }
  return { result, moduleBroken };
}

/** Output printed through the guest's `console`, cut at the limit. */
class OutputBuffer {
  private text = '';
  constructor(private readonly limit: number) {}
  write(line: string): void {
    if (this.text.length < this.limit) this.text += `${line}\n`.slice(0, this.limit - this.text.length);
  }
  take(): string {
    const text = this.text;
    this.text = '';
    return text;
  }
}

function runAll(runtime: QuickJSRuntime, request: SandboxRequest, limits: SandboxLimits): Omit<SandboxRun, 'durationMs'> {
  const { code, tests } = request;
  const output = new OutputBuffer(limits.maxOutputChars);
  const results: TestResult[] = [];
  let loadStdout = '';
  const inScope = tests.filter((t) => t.kind !== 'stdio');
  try {
    if (inScope.length > 0 || tests.length === 0) {
      const context = newGuest(runtime, output, '');
      try {
        const loaded = evaluate(context, code, 'solution.js');
        loadStdout = output.take();
        if (loaded) return { status: loaded.status, error: loaded.text, stdout: loadStdout, tests: unrunTests(tests, 0, loaded.text) };
        for (const test of inScope) results.push(runInScope(context, test, output));
      } finally {
        context.dispose();
      }
    }
    for (const test of tests) if (test.kind === 'stdio') results.push(runProgram(runtime, code, test, output));
  } catch (error) {
    if (!(error instanceof RunStop)) throw error;
    const done = new Set(results.map((r) => r.name));
    const rest = tests.filter((t) => !done.has(t.name));
    return {
      status: error.failure.status,
      error: error.failure.text,
      stdout: loadStdout,
      tests: [...results, ...unrunTests(rest, 0, error.failure.text)],
    };
  }
  const byName = new Map(results.map((r) => [r.name, r]));
  return { status: 'ok', stdout: loadStdout, tests: tests.map((t) => byName.get(t.name)!) };
}

function newGuest(runtime: QuickJSRuntime, output: OutputBuffer, stdin: string): QuickJSContext {
  const context = runtime.newContext();
  const lines = stdin === '' ? [] : stdin.replace(/\r\n?/g, '\n').replace(/\n$/, '').split('\n');
  const consoleObject = context.newObject();
  const log = context.newFunction('log', (...args: QuickJSHandle[]) => {
    output.write(
      args.map((arg) => (context.typeof(arg) === 'string' ? context.getString(arg) : String(JSON.stringify(context.dump(arg))))).join(' '),
    );
  });
  for (const name of ['log', 'info', 'warn', 'error']) context.setProp(consoleObject, name, log);
  context.setProp(context.global, 'console', consoleObject);
  const readline = context.newFunction('readline', () => (lines.length > 0 ? context.newString(lines.shift()!) : context.null));
  context.setProp(context.global, 'readline', readline);
  for (const handle of [log, consoleObject, readline]) handle.dispose();
  const prelude = context.evalCode(GUEST_PRELUDE, 'prelude.js');
  context.unwrapResult(prelude).dispose();
  return context;
}

/** Runs guest source; returns the guest's error, or undefined. Throws RunStop when the deadline or memory ended it. */
function evaluate(
  context: QuickJSContext,
  source: string,
  file: string,
  onValue?: (value: QuickJSHandle) => void,
): GuestFailure | undefined {
  const result = context.evalCode(source, file);
  if (result.error) {
    const failure = describe(context, result.error);
    result.error.dispose();
    if (failure.status !== 'ok' && failure.status !== 'error') throw new RunStop(failure);
    return failure;
  }
  try {
    onValue?.(result.value);
  } finally {
    result.value.dispose();
  }
  return undefined;
}

function describe(context: QuickJSContext, error: QuickJSHandle): GuestFailure {
  const dumped: unknown = context.dump(error);
  const fields = dumped !== null && typeof dumped === 'object' ? (dumped as { name?: unknown; message?: unknown }) : {};
  const name = typeof fields.name === 'string' ? fields.name : undefined;
  const message = 'message' in fields ? String(fields.message) : (JSON.stringify(dumped) ?? 'undefined');
  if (name === 'InternalError' && message === 'interrupted') return { text: 'timeout: the run exceeded its time limit', status: 'timeout' };
  if (name === 'InternalError' && message === 'out of memory')
    return { text: 'memory: the run exceeded its memory limit', status: 'memory' };
  return { text: name === undefined ? `uncaught ${message}` : `${name}: ${message}`, status: 'error' };
}

function runInScope(context: QuickJSContext, test: Exclude<CodeTest, { kind: 'stdio' }>, output: OutputBuffer): TestResult {
  let mismatch: string | undefined;
  const source =
    test.kind === 'assert'
      ? `{\n${test.code}\n}`
      : `JSON.stringify({ v: ${test.fn}(...${JSON.stringify(test.args)}) }, (k, v) => (v === undefined ? null : v))`;
  const failure = evaluate(context, source, `${test.name}.js`, (value) => {
    if (test.kind !== 'call') return;
    const json = context.typeof(value) === 'string' ? context.getString(value) : '';
    const parsed = /^\{"v":([\s\S]*)\}$/.exec(json);
    mismatch = callMismatch(parsed ? parsed[1]! : 'null', test.expected);
  });
  const stdout = output.take();
  const error = failure?.text ?? mismatch;
  return { name: test.name, passed: error === undefined, ...(error === undefined ? {} : { error }), ...(stdout ? { stdout } : {}) };
}

function runProgram(runtime: QuickJSRuntime, code: string, test: Extract<CodeTest, { kind: 'stdio' }>, output: OutputBuffer): TestResult {
  const context = newGuest(runtime, output, test.stdin);
  try {
    const failure = evaluate(context, code, 'solution.js');
    const stdout = output.take();
    const error = failure?.text ?? stdoutMismatch(stdout, test.stdout);
    return { name: test.name, passed: error === undefined, ...(error === undefined ? {} : { error }), stdout };
  } finally {
    context.dispose();
  }
}
