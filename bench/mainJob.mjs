// The main job's step time and wall time, trained on tfjs (before issue 19) and on onnx (the default since):
// `drmas train --config examples/math/drmas.config.json`, the runs alternating the backends.
// usage: node bench/mainJob.mjs [--runs N] [--steps N] [--no-eval] [--records FILE] [--before DIR]
//   (npm run bench:main-job; run `npx tsc -b` first). `--steps` and `--no-eval` shorten the job (a loaded machine).
// Prints one JSON line per run and writes the section "Main job: tfjs vs onnx trainer" of bench/RESULTS.md;
// `--records FILE` writes it from the JSON lines of an earlier (perhaps interrupted) run instead of training.
// `--before DIR`: instead, the whole job (onnx) in DIR, a built checkout of an earlier commit, against this checkout,
// alternating; wall time, evaluation and step time, avg@16 before and after training; section "Main job: before and
// after" (`mainJobSpeed.mjs`).
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { trainRun } from './lib/trainRun.mjs';
import { median } from './lib/workloads.mjs';
import { MAIN_JOB_SECTION, writeMeasuredSection } from './lib/resultsSections.mjs';
import { compareCheckouts } from './lib/mainJobSpeed.mjs';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '2' },
    steps: { type: 'string' },
    'no-eval': { type: 'boolean' },
    records: { type: 'string' },
    before: { type: 'string' },
  },
  strict: true,
});
const runs = Number(values.runs);
if (values.before) {
  await compareCheckouts(values.before, { runs, records: values.records });
  process.exit(0);
}
const BACKENDS = ['tfjs', 'onnx'];
const CONFIG = 'examples/math/drmas.config.json';

/** One training run on `backend`: wall seconds, and the step timings from its metrics.jsonl. */
function trainOnce(backend) {
  const args = [];
  if (backend === 'tfjs') args.push('--set', 'models.policy.backend=tfjs');
  if (values.steps) args.push('--set', `trainer.steps=${values.steps}`);
  if (values['no-eval']) args.push('--set', 'eval.atStart=false', '--set', 'eval.atEnd=false');
  const run = trainRun(CONFIG, args, `main job on ${backend}`);
  if (!run) return undefined;
  const { wallSeconds, steps, median: of } = run;
  const record = {
    bench: 'main-job',
    backend,
    steps: steps.length,
    wallSeconds,
    stepSeconds: of('timing/step'),
    updateSeconds: of('timing/update'),
    rolloutSeconds: of('timing/rollout'),
    loadAverage: loadavg().map((x) => +x.toFixed(2)),
  };
  console.log(JSON.stringify(record));
  return record;
}

const records = [];
let loadAtStart = loadavg().map((x) => +x.toFixed(2));
if (values.records) {
  for (const line of readFileSync(values.records, 'utf8').split('\n')) {
    if (line.startsWith('{') && JSON.parse(line).bench === 'main-job') records.push(JSON.parse(line));
  }
  loadAtStart = records[0]?.loadAverage ?? loadAtStart;
} else {
  for (let r = 0; r < runs; r++) {
    // Alternate which backend goes first, so that a trend in the machine's load hits both alike.
    for (const backend of r % 2 ? [...BACKENDS].reverse() : BACKENDS) {
      const record = trainOnce(backend);
      if (record) records.push(record);
    }
  }
}
const loadAtEnd = values.records ? (records.at(-1)?.loadAverage ?? loadAtStart) : loadavg().map((x) => +x.toFixed(2));

const fmt = (v, digits = 1) => (v === undefined || Number.isNaN(v) ? '-' : v.toFixed(digits));
const summary = BACKENDS.map((backend) => {
  const mine = records.filter((r) => r.backend === backend);
  return {
    backend,
    runs: mine.length,
    wall: mine.length ? median(mine.map((r) => r.wallSeconds)) : undefined,
    step: mine.length ? median(mine.map((r) => r.stepSeconds)) : undefined,
    update: mine.length ? median(mine.map((r) => r.updateSeconds)) : undefined,
    rollout: mine.length ? median(mine.map((r) => r.rolloutSeconds)) : undefined,
    each: mine.map((r) => `${fmt(r.wallSeconds, 0)} s / ${fmt(r.stepSeconds, 2)} s`).join('; '),
  };
});
const [before, after] = summary;
const table = [
  '| trainer | runs | wall time (s, median) | step (s, median of run medians) | update (s) | rollout (s) | each run: wall / median step |',
  '|---|---:|---:|---:|---:|---:|---|',
  ...summary.map(
    (s) =>
      `| ${s.backend}${s.backend === 'tfjs' ? ' (before)' : ' (after, default)'} | ${s.runs} | ${fmt(s.wall, 0)} | ${fmt(s.step, 2)} | ` +
      `${fmt(s.update, 2)} | ${fmt(s.rollout, 2)} | ${s.each} |`,
  ),
];
const speedups =
  before.wall && after.wall
    ? `onnx over tfjs: **${fmt(before.wall / after.wall, 2)}x** wall time, **${fmt(before.step / after.step, 2)}x** step time.`
    : 'A backend failed: no speed-up to quote.';
console.log(table.join('\n'));
console.log(speedups);

const lines = [
  `Measured by \`npm run bench:main-job -- --runs ${runs}${values.steps ? ` --steps ${values.steps}` : ''}${values['no-eval'] ? ' --no-eval' : ''}\` (${records.length} runs done) on ${new Date().toISOString()}: \`node core/bin/drmas.js train --config`,
  `${CONFIG}\` (${values.steps ?? 'its 30'} steps, ${values['no-eval'] ? 'no evaluation' : 'evaluation at start and end as configured'}), trained on tfjs`,
  "(`--set models.policy.backend=tfjs`) and on onnx (the default), runs alternating. Step times are each run's median of",
  `\`timing/step\`; wall time is the whole process, evaluation (if any) included. ${availableParallelism()} cores shared with other`,
  `jobs: load average ${loadAtStart.join(' / ')} ${values.records ? "at the first run's end" : 'at start'}, ${loadAtEnd.join(' / ')} at the last run's end.`,
  '',
  ...table,
  '',
  speedups,
];
const heading = '## Main job: tfjs trainer (before) vs onnx trainer (after)';
writeMeasuredSection(MAIN_JOB_SECTION, heading, lines, 'the main job figures');
