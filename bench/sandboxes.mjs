// drmas benchmark: the env-code sandboxes on a synthetic task (one-line function, four call tests). Prints the
// median of N rounds (after a warm-up) of one run in QuickJS and in a warm Pyodide worker, the Pyodide worker's
// start (median of 3 fresh workers), and how long an infinite loop takes to be stopped (deadline 200 ms). The load
// average is printed: on a shared machine wall time also counts the other jobs.
// usage: npx tsc -b && node bench/sandboxes.mjs [--rounds N]
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { PyodideSandbox, QuickJsSandbox, syntheticCodeTasks } from '@drmas/plugin-env-code';

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
const rows = [];

const quickjs = new QuickJsSandbox();
await quickjs.run({ language: 'javascript', code: js.solution, tests: js.tests });
const jsRuns = [];
for (let i = 0; i < rounds; i++) jsRuns.push(await time(() => quickjs.run({ language: 'javascript', code: js.solution, tests: js.tests })));
rows.push(['QuickJS run (4 tests)', median(jsRuns)]);
const jsLoops = [];
for (let i = 0; i < 3; i++)
  jsLoops.push(await time(() => quickjs.run({ language: 'javascript', code: 'for (;;) {}', tests: [], limits: { timeoutMs: 200 } })));
rows.push(['QuickJS infinite loop, deadline 200 ms', median(jsLoops)]);

const starts = [];
for (let i = 0; i < 3; i++) {
  const fresh = new PyodideSandbox();
  starts.push(await time(() => fresh.warm()));
  await fresh.dispose();
}
rows.push(['Pyodide worker start', median(starts)]);
const pyodide = new PyodideSandbox();
await pyodide.warm();
await pyodide.run({ language: 'python', code: py.solution, tests: py.tests });
const pyRuns = [];
for (let i = 0; i < rounds; i++) pyRuns.push(await time(() => pyodide.run({ language: 'python', code: py.solution, tests: py.tests })));
rows.push(['Pyodide warm run (4 tests)', median(pyRuns)]);
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
for (const [what, ms] of rows) console.log(`${what.padEnd(52)} ${ms.toFixed(1).padStart(8)} ms`);
