#!/usr/bin/env node
// Dr. MAS vs GRPO at our scale: both estimators on the math and search presets, one model per agent (non-shared),
// several seeds, the same budget; writes results.json and RESULTS.md (avg@16, pass@16, gradient-norm statistics per
// worker group). Usage (after `npm run build`): node examples/drmas-vs-grpo/compare.mjs [--seeds 3] [--steps 20]
// [--presets math,search] [--tasks 32] [--jobs 1] (runs at a time) [--set key=value ...] (extra settings for every run,
// e.g. rollout.promptsPerStep=4)
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '3' },
    steps: { type: 'string' },
    presets: { type: 'string', default: 'math,search' },
    tasks: { type: 'string', default: '32' },
    jobs: { type: 'string', default: '1' },
    set: { type: 'string', multiple: true, default: [] },
    out: { type: 'string', default: path.join(root, 'runs', 'drmas-vs-grpo') },
  },
});
const seeds = Array.from({ length: Number(values.seeds) }, (_, i) => i);
const presets = values.presets.split(',');
const estimators = ['drmas', 'grpo'];

/** Gradient-norm statistics of one series: max, 99th percentile, and spikes above 5x the run's median. */
function gradNormStats(values) {
  const sorted = [...values].filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return { max: NaN, p99: NaN, median: NaN, spikes: 0 };
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
  const median = sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  return { max: sorted.at(-1), p99: at(0.99), median, spikes: sorted.filter((v) => v > 5 * median).length };
}

function readLines(file) {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

const runs = presets.flatMap((preset) =>
  estimators.flatMap((estimator) =>
    seeds.map((seed) => ({
      preset,
      estimator,
      seed,
      runDir: path.join(values.out, `${preset}-${estimator}-seed${seed}`),
    })),
  ),
);

/** Trains one run of the comparison; resolves when its final evaluation is written. */
function train({ preset, estimator, seed, runDir }) {
  mkdirSync(runDir, { recursive: true });
  const args = [
    path.join(root, 'core', 'bin', 'drmas.js'),
    'train',
    '--config',
    path.join(here, `${preset}.non-shared.json`),
    '--run-dir',
    runDir,
    '--set',
    `algorithm.advantage=${estimator}`,
    '--set',
    `trainer.seed=${seed}`,
    '--set',
    `env.seed=${seed}`,
    ...(values.steps ? ['--set', `trainer.steps=${values.steps}`] : []),
    '--set',
    `eval.tasks=${values.tasks}`,
    '--set',
    'report.progress=lines',
    ...values.set.flatMap((setting) => ['--set', setting]),
  ];
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (status) => {
      if (status !== 0) reject(new Error(`run ${runDir} failed with status ${status}`));
      else {
        console.error(`${preset} ${estimator} seed ${seed}: ${((Date.now() - started) / 1000).toFixed(0)} s`);
        resolve();
      }
    });
  });
}

// Finished runs (those with an eval.jsonl) are reused; the rest run `--jobs` at a time.
const pending = runs.filter((run) => !existsSync(path.join(run.runDir, 'eval.jsonl')));
await Promise.all(
  Array.from({ length: Math.max(1, Number(values.jobs)) }, async () => {
    for (let run = pending.shift(); run; run = pending.shift()) await train(run);
  }),
);

const results = runs.map(({ preset, estimator, seed, runDir }) => {
  const metrics = readLines(path.join(runDir, 'metrics.jsonl'));
  const config = JSON.parse(readFileSync(path.join(runDir, 'config.json'), 'utf8'));
  const evaluation = readLines(path.join(runDir, 'eval.jsonl')).at(-1);
  const groups = [...new Set(metrics.flatMap((m) => Object.keys(m)).filter((k) => /^actor\/[^/]+\/grad_norm$/.test(k)))];
  return {
    preset,
    estimator,
    seed,
    budget: `${config.trainer.steps} x ${config.rollout.promptsPerStep} x ${config.rollout.samplesPerPrompt}`,
    avg: evaluation[Object.keys(evaluation).find((k) => /^val\/avg@\d+$/.test(k))],
    pass: evaluation[Object.keys(evaluation).find((k) => /^val\/pass@\d+$/.test(k))],
    gradNorm: Object.fromEntries(
      groups.map((g) => [g.split('/')[1], gradNormStats(metrics.map((m) => m[g]).filter((v) => v !== undefined))]),
    ),
  };
});

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sd = (xs) => (xs.length > 1 ? Math.sqrt(xs.reduce((a, b) => a + (b - mean(xs)) ** 2, 0) / (xs.length - 1)) : 0);
const pct = (x) => (100 * x).toFixed(1);
const lines = [
  `| preset | estimator | steps x prompts x samples | avg@16 (mean ± sd over ${seeds.length} seeds) | pass@16 | worker group | grad-norm max (mean) | grad-norm p99 (mean) | spikes > 5x median (total) |`,
  '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
];
for (const preset of presets) {
  for (const estimator of estimators) {
    const runs = results.filter((r) => r.preset === preset && r.estimator === estimator);
    const groups = Object.keys(runs[0].gradNorm);
    groups.forEach((group, i) => {
      const stats = runs.map((r) => r.gradNorm[group]);
      const head =
        i === 0
          ? `| ${preset} | ${estimator} | ${[...new Set(runs.map((r) => r.budget))].join(', ')} | ${pct(mean(runs.map((r) => r.avg)))} ± ${pct(sd(runs.map((r) => r.avg)))} | ${pct(mean(runs.map((r) => r.pass)))} ± ${pct(sd(runs.map((r) => r.pass)))} `
          : '| | | | | ';
      lines.push(
        `${head}| ${group} | ${mean(stats.map((s) => s.max)).toFixed(3)} | ${mean(stats.map((s) => s.p99)).toFixed(3)} | ${stats.reduce((a, s) => a + s.spikes, 0)} |`,
      );
    });
  }
}
const table = lines.join('\n');
mkdirSync(values.out, { recursive: true });
writeFileSync(path.join(values.out, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
writeFileSync(
  path.join(here, 'RESULTS.md'),
  `# Dr. MAS vs GRPO (measured)\n\nCommand: \`node ${[path.relative(root, process.argv[1]), ...process.argv.slice(2)].join(' ')}\`\n\n${table}\n`,
);
console.log(table);
