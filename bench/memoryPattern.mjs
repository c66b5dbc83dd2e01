// onnxruntime's memory pattern (`enableMemPattern`) on and off: step time and peak memory of real training runs.
// usage: node bench/memoryPattern.mjs [--runs N] [--steps N] [--configs A,B] [--records FILE]
//   (npm run bench:memory-pattern). Each config trains `--steps` steps without evaluation with
//   `models.<id>.memoryPattern` set to true and to false on every model, runs alternating (which setting goes first
//   alternates too). Per run: the median `timing/step`, `timing/rollout`, `timing/update`, the peak resident memory
//   the run reports (`perf/max_cpu_memory_used_gb`), and a digest of every learning metric (all but times, memory and
//   the async executor's queue waits), equal digests meaning bitwise the same learning. Prints JSON lines and a table,
//   and writes the section "onnxruntime's memory pattern" of bench/RESULTS.md; `--records FILE` writes it from the
//   JSON lines of earlier runs.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from './lib/benchOptions.mjs';
import { trainRun } from './lib/trainRun.mjs';
import { median } from './lib/workloads.mjs';
import { MEMORY_PATTERN_SECTION, writeMeasuredSection } from './lib/resultsSections.mjs';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '2' },
    steps: { type: 'string', default: '4' },
    configs: { type: 'string', default: 'examples/math/drmas.config.json,examples/drmas-vs-grpo/m-ask.non-shared.json' },
    records: { type: 'string' },
  },
  strict: true,
});
const runs = Number(values.runs);
const steps = Number(values.steps);
const configs = values.configs.split(',');
const SETTINGS = [true, false];

/** The ids of the models `config` trains, presets' included: `drmas info --json`'s worker groups. */
function modelIds(config) {
  const child = spawnSync(process.execPath, ['core/bin/drmas.js', 'info', '--config', config, '--json'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  if (child.status !== 0) throw new Error(`bench: cannot read ${config}: ${child.stderr.trim().split('\n').slice(-2).join(' | ')}`);
  return JSON.parse(child.stdout).sections.workerGroups.map((group) => group.id);
}

/** Keys that differ between any two runs: times, memory, and the async executor's queue waits. */
const VOLATILE_KEY = /^(timing|perf)\/|_ms_/;
/** A digest of every other metric of every step: equal digests, bitwise equal learning. */
const learningOf = (metrics) =>
  createHash('sha256')
    .update(JSON.stringify(metrics.map((m) => Object.fromEntries(Object.entries(m).filter(([k]) => !VOLATILE_KEY.test(k))))))
    .digest('hex')
    .slice(0, 16);

function trainOnce(config, ids, memoryPattern) {
  const args = ['--set', `trainer.steps=${steps}`, '--set', 'eval.atStart=false', '--set', 'eval.atEnd=false'];
  for (const id of ids) args.push('--set', `models.${id}.memoryPattern=${memoryPattern}`);
  const run = trainRun(config, args, `${config} memoryPattern=${memoryPattern}`);
  if (!run) return undefined;
  const { wallSeconds, steps: metrics, median: of } = run;
  return {
    bench: 'memory-pattern',
    config,
    memoryPattern,
    steps: metrics.length,
    wallSeconds,
    stepSeconds: of('timing/step'),
    rolloutSeconds: of('timing/rollout'),
    updateSeconds: of('timing/update'),
    peakGb: metrics.at(-1)['perf/max_cpu_memory_used_gb'],
    learning: learningOf(metrics),
    loadAverage: loadavg().map((x) => +x.toFixed(2)),
  };
}

const records = [];
let loadAtStart = loadavg().map((x) => +x.toFixed(2));
if (values.records) {
  for (const line of readFileSync(values.records, 'utf8').split('\n')) {
    if (line.startsWith('{') && JSON.parse(line).bench === 'memory-pattern') records.push(JSON.parse(line));
  }
  loadAtStart = records[0]?.loadAverage ?? loadAtStart;
} else {
  for (const config of configs) {
    const ids = modelIds(config);
    for (let r = 0; r < runs; r++) {
      for (const setting of r % 2 ? [...SETTINGS].reverse() : SETTINGS) {
        const record = trainOnce(config, ids, setting);
        if (!record) continue;
        records.push(record);
        console.log(JSON.stringify(record));
      }
    }
  }
}
const loadAtEnd = values.records ? (records.at(-1)?.loadAverage ?? loadAtStart) : loadavg().map((x) => +x.toFixed(2));

const fmt = (v, digits = 1) => (v === undefined || Number.isNaN(v) ? '-' : v.toFixed(digits));
const table = [
  '| config | memory pattern | runs | step (s) | rollout (s) | update (s) | peak resident (GiB) | learning metrics |',
  '|---|---|---:|---:|---:|---:|---:|---|',
];
const verdicts = [];
for (const config of configs) {
  const mine = (setting) => records.filter((r) => r.config === config && r.memoryPattern === setting);
  const [on, off] = SETTINGS.map(mine);
  const same = on.length && off.length && [...on, ...off].every((r) => r.learning === on[0].learning);
  for (const [setting, rs] of [
    [true, on],
    [false, off],
  ]) {
    if (!rs.length) continue;
    const m = (key) => median(rs.map((r) => r[key]));
    table.push(
      `| ${config} | ${setting ? "on (onnxruntime's default)" : "off (drmas's default)"} | ${rs.length} | ${fmt(m('stepSeconds'), 2)} | ${fmt(m('rolloutSeconds'), 2)} | ` +
        `${fmt(m('updateSeconds'), 2)} | ${fmt(m('peakGb'), 2)} | ${same ? 'bitwise the same' : rs.length && on.length && off.length ? 'DIFFER' : '-'} |`,
    );
  }
  if (on.length && off.length) {
    const ratio = (key) => median(off.map((r) => r[key])) / median(on.map((r) => r[key]));
    verdicts.push(
      `${config}: with the memory pattern off, step time x${fmt(ratio('stepSeconds'), 2)}, rollout x${fmt(ratio('rolloutSeconds'), 2)}, ` +
        `update x${fmt(ratio('updateSeconds'), 2)}, peak memory x${fmt(ratio('peakGb'), 2)} (${fmt(median(off.map((r) => r.peakGb)), 2)} GiB against ${fmt(median(on.map((r) => r.peakGb)), 2)}).`,
    );
  }
}
console.log(table.join('\n'));
console.log(verdicts.join('\n'));

const lines = [
  values.records
    ? `Measured by \`npm run bench:memory-pattern\` (${records.length} runs; each config's in the table), written from their JSON lines:`
    : `Measured by \`npm run bench:memory-pattern -- --runs ${runs} --steps ${steps}\` (${records.length} runs done) on ${new Date().toISOString()}:`,
  `\`drmas train\` of each config for ${steps} steps without evaluation, with \`models.<id>.memoryPattern\` true and false on`,
  "every model, runs alternating. Times are medians over runs of each run's median step; the peak is the run's",
  `\`perf/max_cpu_memory_used_gb\`. ${availableParallelism()} cores (pin with \`taskset\`), load average ${loadAtStart.join(' / ')} at start,`,
  `${loadAtEnd.join(' / ')} at the end.`,
  '',
  ...table,
  '',
  ...verdicts,
];
const heading = "## onnxruntime's memory pattern: on and off";
writeMeasuredSection(MEMORY_PATTERN_SECTION, heading, lines, 'the memory pattern figures');
