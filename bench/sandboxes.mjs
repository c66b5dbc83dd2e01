// drmas benchmark: the env-code sandboxes on a synthetic task (one-line function, four call tests). Prints the
// median of N rounds (after a warm-up) of one run in a warm QuickJS worker (the worker round trip included) and of
// the same run on the calling thread (runInQuickJs, what the worker does inside), of one run in warm Pyodide
// workers, of the same task as four `assert` tests (they run in the judge: a second QuickJS runtime, a second
// Pyodide worker), each sandbox's start (median of 3 fresh ones; Pyodide starts its two workers), and how long an
// infinite loop and a native call past the deadline take to be stopped (deadline 200 ms). The load average is
// printed: on a shared machine wall time also counts the other jobs.
// usage: npx tsc -b && node bench/sandboxes.mjs [--rounds N]
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { PyodideSandbox, QuickJsSandbox, syntheticCodeTasks } from '@drmas/plugin-env-code';
import { newQuickJSWASMModule } from 'quickjs-emscripten';
// Not exported by the package: the worker's own step, timed here without the thread hop, and the tests as it gets them.
import { runInQuickJs } from '../plugins/env-code/dist/sandbox/runInQuickJs.js';
import { engineTests } from '../plugins/env-code/dist/sandbox/judgeRun.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '20' } } });
const rounds = Number(values.rounds);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const time = async (fn) => {
  const started = performance.now();
  await fn();
  return performance.now() - started;
};

const { train } = syntheticCodeTasks({ seed: 0, languages: ['javascript', 'python'], trainSize: 200, testSize: 0 });
const js = train.find((t) => t.language === 'javascript');
const py = train.find((t) => t.language === 'python');
/** The task's call tests as assertion snippets, which run in the judge. */
const asAsserts = (task, write) => task.tests.map((t) => ({ name: t.name, kind: 'assert', code: write(t) }));
const jsAsserts = asAsserts(js, (t) => `assertEqual(${t.fn}(...${JSON.stringify(t.args)}), ${JSON.stringify(t.expected)});`);
const pyAsserts = asAsserts(py, (t) => `assert ${t.fn}(*${JSON.stringify(t.args)}) == ${JSON.stringify(t.expected)}`);
const rows = [];

/** Median start of 3 fresh workers of a sandbox class. */
const workerStart = async (Sandbox) => {
  const starts = [];
  for (let i = 0; i < 3; i++) {
    const fresh = new Sandbox();
    starts.push(await time(() => fresh.warm()));
    await fresh.dispose();
  }
  return median(starts);
};

rows.push(['QuickJS worker start', await workerStart(QuickJsSandbox)]);
const quickjs = new QuickJsSandbox();
const jsRequest = { language: 'javascript', code: js.solution, tests: js.tests };
await quickjs.run(jsRequest);
const jsRuns = [];
for (let i = 0; i < rounds; i++) jsRuns.push(await time(() => quickjs.run(jsRequest)));
rows.push(['QuickJS warm worker run (4 tests, round trip included)', median(jsRuns)]);
const module = await newQuickJSWASMModule();
const engineRequest = { code: js.solution, tests: engineTests(js.tests) };
runInQuickJs(module, engineRequest);
const inThread = [];
for (let i = 0; i < rounds; i++) inThread.push(await time(async () => runInQuickJs(module, engineRequest)));
rows.push(['QuickJS same run on the calling thread (no worker)', median(inThread)]);
const jsAssertRequest = { language: 'javascript', code: js.solution, tests: jsAsserts };
await quickjs.run(jsAssertRequest);
const jsAssertRuns = [];
for (let i = 0; i < rounds; i++) jsAssertRuns.push(await time(() => quickjs.run(jsAssertRequest)));
rows.push(['QuickJS warm worker run (4 assert tests, in the judge)', median(jsAssertRuns)]);
const jsLoops = [];
for (let i = 0; i < 3; i++)
  jsLoops.push(await time(() => quickjs.run({ language: 'javascript', code: 'for (;;) {}', tests: [], limits: { timeoutMs: 200 } })));
rows.push(['QuickJS infinite loop, deadline 200 ms (interrupt)', median(jsLoops)]);
const jsNative = [];
const jsNativeRun = [];
for (let i = 0; i < 3; i++) {
  const code = 'const a = []; for (;;) a.push(new Array(1e5).fill(1));';
  let run;
  jsNative.push(await time(async () => (run = await quickjs.run({ language: 'javascript', code, tests: [], limits: { timeoutMs: 200 } }))));
  jsNativeRun.push(run.durationMs);
}
// After a kill the next run first starts a fresh worker: the wall time includes that start, the run's own duration does not.
rows.push(['QuickJS pushes of filled arrays, deadline 200 ms (kill)', median(jsNativeRun)]);
rows.push(['  the same, wall time with the fresh worker start', median(jsNative)]);
await quickjs.dispose();

rows.push(['Pyodide start (solution and judge workers)', await workerStart(PyodideSandbox)]);
const pyodide = new PyodideSandbox();
await pyodide.warm();
await pyodide.run({ language: 'python', code: py.solution, tests: py.tests });
const pyRuns = [];
for (let i = 0; i < rounds; i++) pyRuns.push(await time(() => pyodide.run({ language: 'python', code: py.solution, tests: py.tests })));
rows.push(['Pyodide warm run (4 tests)', median(pyRuns)]);
const pyAssertRequest = { language: 'python', code: py.solution, tests: pyAsserts };
await pyodide.run(pyAssertRequest);
const pyAssertRuns = [];
for (let i = 0; i < rounds; i++) pyAssertRuns.push(await time(() => pyodide.run(pyAssertRequest)));
rows.push(['Pyodide warm run (4 assert tests, in the judge)', median(pyAssertRuns)]);
const loops = [];
for (let i = 0; i < 3; i++)
  loops.push(await time(() => pyodide.run({ language: 'python', code: 'while True:\n    pass', tests: [], limits: { timeoutMs: 200 } })));
rows.push(['Pyodide infinite loop, deadline 200 ms (interrupt)', median(loops)]);
await pyodide.dispose();

console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}; ${rounds} rounds`,
);
for (const [what, ms] of rows) console.log(`${what.padEnd(58)} ${ms.toFixed(1).padStart(8)} ms`);
