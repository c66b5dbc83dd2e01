// The main job in two checkouts, alternating (`node bench/mainJob.mjs --before DIR`): wall time, the evaluations'
// and the steps' time, and avg@16 before and after training, written to the "main-job-speed" section of
// bench/RESULTS.md.
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { REPO_ROOT } from './benchOptions.mjs';
import { trainRun } from './trainRun.mjs';
import { median } from './workloads.mjs';
import { MAIN_JOB_SPEED_SECTION, writeMeasuredSection } from './resultsSections.mjs';

const CONFIG = 'examples/math/drmas.config.json';
const load = () => loadavg().map((x) => +x.toFixed(2));
const sum = (values) => values.reduce((a, b) => a + b, 0);

/** One whole main job in `root`, as a JSON record (printed). */
function jobIn(checkout, root) {
  const loadBefore = load();
  const run = trainRun(CONFIG, [], `main job (${checkout})`, root);
  if (!run) return undefined;
  const evaluations = run.lines.map((m) => m['timing/evaluate']).filter((v) => typeof v === 'number');
  const record = {
    bench: 'main-job-speed',
    checkout,
    wallSeconds: +run.wallSeconds.toFixed(2),
    cpuSeconds: run.cpuSeconds === undefined ? undefined : +run.cpuSeconds.toFixed(2),
    evaluateSeconds: +sum(evaluations).toFixed(2),
    stepsSeconds: +sum(run.steps.map((m) => m['timing/step'])).toFixed(2),
    stepSeconds: run.median('timing/step'),
    rolloutSeconds: run.median('timing/rollout'),
    updateSeconds: run.median('timing/update'),
    avgAtStart: run.evals[0]?.['val/avg@16'],
    avgAtEnd: run.evals.at(-1)?.['val/avg@16'],
    loadBefore,
    loadAfter: load(),
  };
  console.log(JSON.stringify(record));
  return record;
}

/**
 * `runs` whole jobs in each checkout, alternating which goes first (a trend in the machine's load hits both alike);
 * or the JSON lines of an earlier run (`records`).
 */
export async function compareCheckouts(beforeDir, { runs, records: recordsFile }) {
  const checkouts = [
    ['before', resolve(beforeDir)],
    ['after', REPO_ROOT],
  ];
  const records = [];
  if (recordsFile) {
    for (const line of readFileSync(recordsFile, 'utf8').split('\n')) {
      if (line.startsWith('{') && JSON.parse(line).bench === 'main-job-speed') records.push(JSON.parse(line));
    }
  } else {
    for (let r = 0; r < runs; r++) {
      for (const [checkout, root] of r % 2 ? [...checkouts].reverse() : checkouts) {
        const record = jobIn(checkout, root);
        if (record) records.push(record);
      }
    }
  }
  const fmt = (v, digits = 1) => (v === undefined || Number.isNaN(v) ? '-' : v.toFixed(digits));
  const of = (checkout, key) => {
    const mine = records.filter((r) => r.checkout === checkout).map((r) => r[key]);
    return mine.length ? median(mine) : undefined;
  };
  const table = [
    '| checkout | runs | wall (s, median) | CPU (s, median) | evaluations (s) | steps (s) | step (s) | rollout (s) | update (s) | avg@16 start -> end | each run: wall / CPU (load before / after) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
    ...['before', 'after'].map((checkout) => {
      const mine = records.filter((r) => r.checkout === checkout);
      const avgs = [...new Set(mine.map((r) => `${fmt(100 * r.avgAtStart)}% -> ${fmt(100 * r.avgAtEnd)}%`))].join(', ');
      const each = mine
        .map((r) => `${fmt(r.wallSeconds, 0)} s / ${fmt(r.cpuSeconds, 0)} s (${r.loadBefore[0]} / ${r.loadAfter[0]})`)
        .join('; ');
      return (
        `| ${checkout} | ${mine.length} | ${fmt(of(checkout, 'wallSeconds'), 0)} | ${fmt(of(checkout, 'cpuSeconds'), 0)} | ` +
        `${fmt(of(checkout, 'evaluateSeconds'), 0)} | ` +
        `${fmt(of(checkout, 'stepsSeconds'), 0)} | ${fmt(of(checkout, 'stepSeconds'), 2)} | ${fmt(of(checkout, 'rolloutSeconds'), 2)} | ` +
        `${fmt(of(checkout, 'updateSeconds'), 2)} | ${avgs} | ${each} |`
      );
    }),
  ];
  const [before, after] = [of('before', 'wallSeconds'), of('after', 'wallSeconds')];
  const [cpuBefore, cpuAfter] = [of('before', 'cpuSeconds'), of('after', 'cpuSeconds')];
  const ratio =
    before && after
      ? `after over before: **${fmt(before / after, 2)}x** wall time, **${fmt(cpuBefore / cpuAfter, 2)}x** CPU time (medians).`
      : 'A checkout failed: no ratio.';
  console.log(table.join('\n'));
  console.log(ratio);
  const lines = [
    `Measured by \`node bench/mainJob.mjs --before ${beforeDir} --runs ${runs}\` (${records.length} runs done) on ${new Date().toISOString()}:`,
    `the whole job, \`node core/bin/drmas.js train --config ${CONFIG}\` (30 steps, both evaluations), in the checkout`,
    `given (built) and in this one, alternating. Evaluations: the two evaluations' \`timing/evaluate\`; steps: the sum of`,
    "`timing/step` (the last step's includes the evaluation at the end); CPU: the process's user and system time, every",
    `thread's. ${availableParallelism()} cores shared with other jobs: each run's 1-minute load average is in the last column.`,
    '',
    ...table,
    '',
    ratio,
  ];
  const heading = '## Main job: before and after (issue 44, item 4)';
  writeMeasuredSection(MAIN_JOB_SPEED_SECTION, heading, lines, 'the main job before/after figures');
}
