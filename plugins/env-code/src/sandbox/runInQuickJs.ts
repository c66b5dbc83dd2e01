import { readFileSync } from 'node:fs';
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from 'quickjs-emscripten';
import { sandboxLimits, type SandboxLimits, type SandboxStatus } from './CodeSandbox.js';
import { plainMismatch } from './compareOutputs.js';
import type { EngineObservation, EngineRun, EngineTest } from './judgeRun.js';
import { decodePlain, encodePlain, showPlain } from './plainData.js';

/** QuickJS's own stack limit: deep recursion ends in a catchable error long before the wasm stack runs out. */
const MAX_STACK_BYTES = 256 * 1024;
/** A name the judge may look up in the solution's context. */
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** What an engine runs: the solution and its tests, without their expected values (judgeRun.ts). */
export interface EngineRequest {
  code: string;
  tests: readonly EngineTest[];
  limits?: Partial<SandboxLimits>;
}

/** Helpers the solution and `exec` snippets see in the solution's context (the judge has its own: worker/quickjs/judge.js). */
const SOLUTION_PRELUDE = `
function assert(condition, message) {
  if (!condition) throw new Error(message === undefined ? 'assertion failed' : String(message));
}
function assertEqual(actual, expected, message) {
  const a = JSON.stringify(actual), e = JSON.stringify(expected);
  if (a !== e) throw new Error((message === undefined ? '' : String(message) + ': ') + 'expected ' + e + ', got ' + a);
}
`;

let guestScripts: { toolkit: string; judge: string } | undefined;
/** The scripts evaluated in a context before anything else (worker/quickjs/), read once. */
function scripts(): { toolkit: string; judge: string } {
  const read = (name: string) => readFileSync(new URL(`../../worker/quickjs/${name}`, import.meta.url), 'utf8');
  return (guestScripts ??= { toolkit: read('toolkit.js'), judge: read('judge.js') });
}

/** An error a context threw, as text, and whether it was the deadline or the memory limit. */
interface GuestFailure {
  text: string;
  status: SandboxStatus;
}

const TIMEOUT: GuestFailure = { text: 'timeout: the run exceeded its time limit', status: 'timeout' };
const MEMORY: GuestFailure = { text: 'memory: the run exceeded its memory limit', status: 'memory' };

class RunStop extends Error {
  constructor(readonly failure: GuestFailure) {
    super(failure.text);
  }
}

/** The run's deadline and stop, shared by the solution's runtime and the judge's: either interrupts both. */
class RunClock {
  failure?: GuestFailure;
  constructor(readonly deadline: number) {}
  readonly interrupted = (): boolean => this.failure !== undefined || Date.now() > this.deadline;
  stop(failure: GuestFailure): never {
    this.failure ??= failure;
    throw new RunStop(this.failure);
  }
}

/**
 * Runs one request in fresh QuickJS runtimes of `module` (memory limit, stack limit, an interrupt handler for the
 * deadline), disposed after, so nothing a run changes (prototypes, globals) reaches the next. The solution runs in
 * one runtime; its `assert` tests run in a second, the judge, which never runs the solution's code (judge.js). The
 * result is what the engines saw; the host judges it (judgeRun.ts). `moduleBroken`: a runtime failed its disposal
 * (left mid-allocation by the memory limit), so the wasm instance must be dropped.
 */
export function runInQuickJs(module: QuickJSWASMModule, request: EngineRequest): { result: EngineRun; moduleBroken: boolean } {
  const limits = sandboxLimits(request.limits);
  const clock = new RunClock(Date.now() + limits.timeoutMs);
  const runtimes: QuickJSRuntime[] = [];
  const newRuntime = (): QuickJSRuntime => {
    const runtime = module.newRuntime();
    runtimes.push(runtime);
    runtime.setMemoryLimit(limits.memoryBytes);
    runtime.setMaxStackSize(MAX_STACK_BYTES);
    runtime.setInterruptHandler(clock.interrupted);
    return runtime;
  };
  let result: EngineRun;
  let moduleBroken = false;
  try {
    result = runAll(newRuntime, request, limits, clock);
  } finally {
    for (const runtime of runtimes.reverse()) {
      try {
        runtime.dispose();
      } catch {
        moduleBroken = true;
      }
    }
  }
  return { result, moduleBroken };
}

/** Output printed through the contexts' `console`, cut at the limit. */
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

type ToolkitFunction = 'encode' | 'invoke' | 'invokeRef' | 'describe' | 'refer';
const TOOLKIT_FUNCTIONS: ToolkitFunction[] = ['encode', 'invoke', 'invokeRef', 'describe', 'refer'];

/** The toolkit's description of a thrown value (worker/quickjs/toolkit.js). */
type Described = { name: string | null; message: string } | { thrown: string };

/** What a call through the toolkit gave: the plain-data text of the value, or the error. */
type Reply = { value: string } | { error: string };

/**
 * A context with `console` and `readline`. The solution's gets the plain-data toolkit (worker/quickjs/toolkit.js)
 * before anything else runs in it, its functions held here, out of the context's reach; the judge's gets judge.js.
 * Every call that meets the deadline or the memory limit stops the run (RunStop).
 */
class Guest {
  readonly context: QuickJSContext;
  private toolkit?: Record<ToolkitFunction, QuickJSHandle>;
  private readonly owned: QuickJSHandle[] = [];

  constructor(
    runtime: QuickJSRuntime,
    output: OutputBuffer,
    stdin: string,
    private readonly clock: RunClock,
  ) {
    const context = (this.context = runtime.newContext());
    const lines = stdin === '' ? [] : stdin.replace(/\r\n?/g, '\n').replace(/\n$/, '').split('\n');
    const consoleObject = context.newObject();
    const log = context.newFunction('log', (...args: QuickJSHandle[]) => {
      output.write(
        args
          .map((arg) => (context.typeof(arg) === 'string' ? context.getString(arg) : String(JSON.stringify(context.dump(arg)))))
          .join(' '),
      );
    });
    for (const name of ['log', 'info', 'warn', 'error']) context.setProp(consoleObject, name, log);
    context.setProp(context.global, 'console', consoleObject);
    const readline = context.newFunction('readline', () => (lines.length > 0 ? context.newString(lines.shift()!) : context.null));
    context.setProp(context.global, 'readline', readline);
    for (const handle of [log, consoleObject, readline]) handle.dispose();
  }

  /**
   * The solution's context: the toolkit (tracking proxies), then the helpers solutions and `exec` snippets use. A
   * program's context (a `stdio` test) needs only the helpers: what it prints is all the host compares.
   */
  installSolution(withToolkit: boolean): void {
    if (withToolkit) {
      const make = this.mustEvaluate(scripts().toolkit, 'toolkit.js');
      this.useToolkit(this.mustCall(make, this.context.true), make);
    }
    this.mustEvaluate(SOLUTION_PRELUDE, 'prelude.js').dispose();
  }

  /** The judge's context: judge.js installs the tests' helpers and the lookup of the solution's names. */
  installJudge(host: { lookup: (name: string) => string; call: (id: number, args: string) => string }): void {
    const { context } = this;
    const install = this.mustEvaluate(scripts().judge, 'judge.js');
    const lookup = context.newFunction('lookup', (name) => context.newString(host.lookup(context.getString(name))));
    const call = context.newFunction('call', (id, args) => context.newString(host.call(context.getNumber(id), context.getString(args))));
    const mismatch = context.newFunction('mismatch', (actual, expected) => {
      const why = plainMismatch(context.getString(actual), context.getString(expected));
      return why === undefined ? context.undefined : context.newString(why);
    });
    this.mustCall(install, lookup, call, mismatch).dispose();
    this.owned.push(install, lookup, call, mismatch);
  }

  /** Evaluates guest source: its value (the caller disposes it) or the guest's error. */
  evaluate(source: string, file: string): { value: QuickJSHandle } | { failure: GuestFailure } {
    const result = this.context.evalCode(source, file);
    if (!result.error) return { value: result.value };
    try {
      return { failure: this.failureOf(result.error) };
    } finally {
      result.error.dispose();
    }
  }

  /** Runs guest source for its effect: the guest's error, or undefined. */
  run(source: string, file: string): GuestFailure | undefined {
    const outcome = this.evaluate(source, file);
    if ('failure' in outcome) return outcome.failure;
    outcome.value.dispose();
    return undefined;
  }

  /** The value's plain-data text; what is not plain data becomes a reference the judge can call back. */
  encodeWithRefs(value: QuickJSHandle): string {
    return this.callToolkit('encode', value, this.toolkit!.refer);
  }

  /** `fn(...args)` through the toolkit; `args` is plain-data text. */
  invoke(fn: QuickJSHandle, args: string): Reply {
    return this.withString(args, (handle) => this.reply(this.callToolkit('invoke', fn, handle, this.context.false)));
  }

  /** A call of the solution's value number `id` (a reference the judge holds); the reply's JSON text. */
  invokeRef(id: number, args: string): string {
    const idHandle = this.context.newNumber(id);
    try {
      const text = this.withString(args, (handle) => this.callToolkit('invokeRef', idHandle, handle));
      this.reply(text);
      return text;
    } finally {
      idHandle.dispose();
    }
  }

  dispose(): void {
    for (const handle of this.owned) handle.dispose();
    this.context.dispose();
  }

  private withString<T>(text: string, use: (handle: QuickJSHandle) => T): T {
    const handle = this.context.newString(text);
    try {
      return use(handle);
    } finally {
      handle.dispose();
    }
  }

  /** A toolkit reply (`{"value"}` or `{"error"}`); an error that is the deadline or the memory limit stops the run. */
  private reply(text: string): Reply {
    const reply = JSON.parse(text) as { value?: string; error?: Described };
    if (reply.error === undefined) return { value: reply.value ?? 'null' };
    const failure = failureFrom(reply.error);
    if (failure.status !== 'error') this.clock.stop(failure);
    return { error: failure.text };
  }

  private callToolkit(name: ToolkitFunction, ...args: QuickJSHandle[]): string {
    const result = this.context.callFunction(this.toolkit![name], this.context.undefined, ...args);
    if (result.error) {
      try {
        return JSON.stringify({ error: { name: null, message: this.engineFailure(result.error).text } });
      } finally {
        result.error.dispose();
      }
    }
    const text = this.context.typeof(result.value) === 'string' ? this.context.getString(result.value) : 'null';
    result.value.dispose();
    return text;
  }

  /** What the guest threw, described by the toolkit (no hook of the guest's is called). */
  private failureOf(error: QuickJSHandle): GuestFailure {
    if (this.clock.interrupted()) this.clock.stop(this.clock.failure ?? TIMEOUT);
    if (!this.toolkit) return this.engineFailure(error);
    const failure = failureFrom(JSON.parse(this.callToolkit('describe', error)) as Described);
    if (failure.status !== 'error') this.clock.stop(failure);
    return failure;
  }

  /** Before the toolkit exists, or when a toolkit call itself failed (a limit, a stack overflow): the engine's dump. */
  private engineFailure(error: QuickJSHandle): GuestFailure {
    if (this.clock.interrupted()) this.clock.stop(this.clock.failure ?? TIMEOUT);
    const dumped: unknown = this.context.dump(error);
    const fields = dumped !== null && typeof dumped === 'object' ? (dumped as { name?: unknown; message?: unknown }) : {};
    const name = typeof fields.name === 'string' ? fields.name : null;
    const message = 'message' in fields ? String(fields.message) : (JSON.stringify(dumped) ?? 'undefined');
    const failure = failureFrom({ name, message });
    if (failure.status !== 'error') this.clock.stop(failure);
    return failure;
  }

  private useToolkit(toolkit: QuickJSHandle, ...others: QuickJSHandle[]): void {
    const functions = TOOLKIT_FUNCTIONS.map((name) => [name, this.context.getProp(toolkit, name)] as const);
    this.owned.push(toolkit, ...others, ...functions.map(([, handle]) => handle));
    this.toolkit = Object.fromEntries(functions) as Record<ToolkitFunction, QuickJSHandle>;
  }

  private mustEvaluate(source: string, file: string): QuickJSHandle {
    const outcome = this.evaluate(source, file);
    if ('failure' in outcome) throw new Error(`${file}: ${outcome.failure.text}`);
    return outcome.value;
  }

  private mustCall(fn: QuickJSHandle, ...args: QuickJSHandle[]): QuickJSHandle {
    const result = this.context.callFunction(fn, this.context.undefined, ...args);
    if (!result.error) return result.value;
    try {
      throw new Error(this.engineFailure(result.error).text);
    } finally {
      result.error.dispose();
    }
  }
}

function failureFrom(described: Described): GuestFailure {
  if ('thrown' in described) return { text: `uncaught ${showPlain(decodePlain(described.thrown))}`, status: 'error' };
  const { name, message } = described;
  if (name === 'InternalError' && message === 'interrupted') return TIMEOUT;
  if (name === 'InternalError' && message === 'out of memory') return MEMORY;
  return { text: name === null ? `uncaught ${message}` : `${name}: ${message}`, status: 'error' };
}

function runAll(newRuntime: () => QuickJSRuntime, request: EngineRequest, limits: SandboxLimits, clock: RunClock): EngineRun {
  const { code, tests } = request;
  const output = new OutputBuffer(limits.maxOutputChars);
  const observations: EngineObservation[] = [];
  const ownScope = tests.filter((t) => t.kind === 'call' || t.kind === 'exec');
  const judged = tests.filter((t) => t.kind === 'assert');
  let loadStdout = '';
  try {
    const solutionRuntime = newRuntime();
    if (ownScope.length > 0 || judged.length > 0 || tests.length === 0) {
      const solution = new Guest(solutionRuntime, output, '', clock);
      try {
        solution.installSolution(true);
        const loaded = solution.run(code, 'solution.js');
        loadStdout = output.take();
        if (loaded) return { status: 'error', error: loaded.text, stdout: loadStdout, tests: [] };
        for (const test of ownScope) observations.push(runInSolution(solution, test, output));
        if (judged.length > 0) runJudged(newRuntime(), solution, judged, output, clock, observations);
      } finally {
        solution.dispose();
      }
    }
    for (const test of tests) if (test.kind === 'stdio') observations.push(runProgram(solutionRuntime, code, test, output, clock));
  } catch (error) {
    if (!(error instanceof RunStop)) throw error;
    return { status: error.failure.status, error: error.failure.text, stdout: loadStdout, tests: observations };
  }
  return { status: 'ok', stdout: loadStdout, tests: observations };
}

function observed(test: EngineTest, output: OutputBuffer, found: { value?: string; error?: string }): EngineObservation {
  const stdout = output.take();
  return { index: test.index, ...found, ...(stdout ? { stdout } : {}) };
}

/** A `call` test (the value, as plain data, for the host to compare) or an `exec` snippet, in the solution's context. */
function runInSolution(solution: Guest, test: EngineTest, output: OutputBuffer): EngineObservation {
  if (test.kind === 'exec') {
    const failure = solution.run(`{\n${test.code}\n}`, `${test.name}.js`);
    return observed(test, output, failure ? { error: failure.text } : {});
  }
  if (test.kind !== 'call') throw new Error(`${test.kind} tests do not run in the solution's context`);
  const fn = solution.evaluate(test.fn, `${test.name}.js`);
  if ('failure' in fn) return observed(test, output, { error: fn.failure.text });
  try {
    const reply = solution.invoke(fn.value, encodePlain(test.args));
    return observed(test, output, 'value' in reply ? { value: reply.value } : { error: reply.error });
  } finally {
    fn.value.dispose();
  }
}

/**
 * The `assert` tests, in the judge: a runtime of its own whose context never runs the solution's code. The names the
 * tests take from the solution are looked up in the solution's context and cross as plain data, or as references the
 * judge can only call or compare by identity.
 */
function runJudged(
  runtime: QuickJSRuntime,
  solution: Guest,
  tests: EngineTest[],
  output: OutputBuffer,
  clock: RunClock,
  observations: EngineObservation[],
): void {
  const judge = new Guest(runtime, output, '', clock);
  try {
    judge.installJudge({
      lookup: (name) => {
        if (!IDENTIFIER.test(name)) return '{"missing":true}';
        const found = solution.evaluate(name, 'lookup.js');
        if ('failure' in found) {
          const { text } = found.failure;
          return text.startsWith('ReferenceError') ? '{"missing":true}' : JSON.stringify({ error: { name: null, message: text } });
        }
        try {
          return JSON.stringify({ value: solution.encodeWithRefs(found.value) });
        } finally {
          found.value.dispose();
        }
      },
      call: (id, args) => solution.invokeRef(id, args),
    });
    for (const test of tests) {
      if (test.kind !== 'assert') continue;
      const failure = judge.run(`{\n${test.code}\n}`, `${test.name}.js`);
      // A limit met inside a call into the solution ends the run, whatever the test did with the error it got.
      if (clock.failure) throw new RunStop(clock.failure);
      observations.push(observed(test, output, failure ? { error: failure.text } : {}));
    }
  } finally {
    judge.dispose();
  }
}

function runProgram(
  runtime: QuickJSRuntime,
  code: string,
  test: Extract<EngineTest, { kind: 'stdio' }>,
  output: OutputBuffer,
  clock: RunClock,
): EngineObservation {
  const program = new Guest(runtime, output, test.stdin, clock);
  try {
    program.installSolution(false);
    const failure = program.run(code, 'solution.js');
    return { index: test.index, ...(failure ? { error: failure.text } : {}), stdout: output.take() };
  } finally {
    program.dispose();
  }
}
