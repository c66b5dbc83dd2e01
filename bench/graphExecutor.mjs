// The async graph executor against the lock-step runner: episodes per second of the search preset's rollouts (its
// tiny base checkpoint, its rollout engine), the same tasks, seed and model for both, episodes of mixed length (the
// Verifier decides each step whether to search again or answer, up to env.maxSteps). Reports, per executor setting,
// generate calls, batch fill (rows per call / maxBatchSize) and queue waits, and writes the table into bench/RESULTS.md.
// usage: npm run build && node bench/graphExecutor.mjs [--rounds 3] [--groups 8] [--samples 5] [--config file] [--set key=value ...] [--dry-run]   (npm run bench:executor)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createKernel, WorkerGroups } from '@drmas/core';
import { executorSection, GraphExecutor, OrchestraRunner, Workflow } from '@drmas/plugin-orchestra';
import { BENCH_DIR, REPO_ROOT } from './lib/benchOptions.mjs';
import { median } from './lib/workloads.mjs';
import { replaceWholeSection } from './lib/resultsSections.mjs';

const SECTION = 'graph-executor';
const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    groups: { type: 'string', default: '8' },
    samples: { type: 'string', default: '5' },
    config: { type: 'string', default: 'examples/search/drmas.config.json' },
    /** Config overrides, as `--set` of drmas train (repeatable). */
    set: { type: 'string', multiple: true, default: [] },
    'dry-run': { type: 'boolean', default: false },
  },
});
const rounds = Number(values.rounds);
const groups = Number(values.groups);
const samples = Number(values.samples);
const dir = mkdtempSync(path.join(tmpdir(), 'drmas-bench-executor-'));

const { kernel } = await createKernel({ cwd: REPO_ROOT, configPath: values.config, overrides: values.set });
const workflow = kernel.get(Workflow);
const workerGroups = kernel.get(WorkerGroups);
await workerGroups.create(
  { config: kernel.config, container: kernel.container, runDir: dir, signal: new AbortController().signal, log: () => {} },
  { reference: false, samplingOnly: true },
);
const environment = workflow.environment();
await environment.init();
const engineFor = (agentId) => {
  const group = workerGroups.forAgent(agentId);
  return { workerGroupId: group.id, backend: group.rollout, codec: group.codec ?? group.rollout.tokenizer };
};
const base = { environment, orchestra: workflow.orchestra(), agents: workflow.agents(), engineFor, settings: kernel.config.orchestra };
const engineName = engineFor(Object.keys(base.orchestra.agents)[0]).backend.name;
const tasks = environment.batch(0, groups).tasks;
const request = { tasks, samplesPerTask: samples, seed: 1234, idPrefix: 's1r0' };
const episodes = groups * samples;
const { kind: _kind, ...defaults } = executorSection.parse({});

const runners = [
  { name: 'lock-step', run: () => new OrchestraRunner(base).run({ ...request, sampleStreams: 'row' }) },
  ...[
    { maxBatchSize: episodes, maxWaitMs: 2, modelConcurrency: 1 },
    { maxBatchSize: 8, maxWaitMs: 2, modelConcurrency: 1 },
    { maxBatchSize: 8, maxWaitMs: 2, modelConcurrency: 2 },
  ].map((settings) => ({
    name: `async, maxBatchSize ${settings.maxBatchSize}, maxWaitMs ${settings.maxWaitMs}, modelConcurrency ${settings.modelConcurrency}`,
    settings,
    run: () => new GraphExecutor({ ...base, executor: { ...defaults, ...settings } }).run(request),
  })),
];

function measure(runner, run, seconds, cpuSeconds) {
  const calls = Object.values(run.generateCalls).reduce((a, b) => a + b, 0);
  const turns = run.trajectories.map((t) => t.turns.length);
  const record = {
    bench: 'graph-executor',
    runner: runner.name,
    engine: engineName,
    episodes: run.trajectories.length,
    seconds,
    eps: run.trajectories.length / seconds,
    cpuSecondsPerEpisode: cpuSeconds / run.trajectories.length,
  };
  record.turnsMin = Math.min(...turns);
  record.turnsMax = Math.max(...turns);
  record.turnsMean = turns.reduce((a, b) => a + b, 0) / turns.length;
  if (run.executor) {
    const queues = Object.values(run.executor.models);
    const batches = queues.reduce((a, q) => a + q.batches, 0);
    const rows = queues.reduce((a, q) => a + q.rows, 0);
    const waits = queues.flatMap((q) => q.waits).sort((a, b) => a - b);
    Object.assign(record, {
      generateCalls: batches,
      rowsPerCall: rows / batches,
      batchFill: rows / (batches * runner.settings.maxBatchSize),
      queueWaitMedianMs: waits[Math.floor(waits.length / 2)],
      queueWaitP90Ms: waits[Math.floor(waits.length * 0.9)],
      failed: Object.values(run.executor.failed).reduce((a, b) => a + b, 0),
    });
  } else {
    Object.assign(record, { generateCalls: calls, rowsPerCall: turns.reduce((a, b) => a + b, 0) / calls });
  }
  return record;
}

// Warm-up: each runner once (onnxruntime builds its sessions, the engine's caches fill).
for (const runner of runners) await runner.run();
const results = new Map(runners.map((r) => [r.name, []]));
for (let round = 0; round < rounds; round++) {
  // Alternate the order each round, so drift in the machine's load falls on every runner alike.
  const order = round % 2 === 0 ? runners : [...runners].reverse();
  for (const runner of order) {
    const started = performance.now();
    const cpu = process.cpuUsage();
    const run = await runner.run();
    const used = process.cpuUsage(cpu);
    const record = measure(runner, run, (performance.now() - started) / 1000, (used.user + used.system) / 1e6);
    results.get(runner.name).push(record);
    console.log(JSON.stringify({ round, ...record }));
  }
}
rmSync(dir, { recursive: true, force: true });

const lockstep = median(results.get('lock-step').map((r) => r.eps));
const fmt = (x, digits = 2) => (x === undefined ? '-' : x.toFixed(digits));
const rows = runners.map((runner) => {
  const records = results.get(runner.name);
  const eps = median(records.map((r) => r.eps));
  const last = records.at(-1);
  const cpu = median(records.map((r) => r.cpuSecondsPerEpisode));
  return `| ${runner.name} | ${fmt(eps)} | ${fmt(eps / lockstep)}x | ${fmt(cpu, 3)} | ${median(records.map((r) => r.generateCalls))} | ${fmt(last.rowsPerCall, 1)} | ${fmt(last.batchFill)} | ${fmt(last.queueWaitMedianMs, 0)} / ${fmt(last.queueWaitP90Ms, 0)} |`;
});
const first = results.get('lock-step').at(-1);

/** What the figures say, with the run's own numbers (kept beside the table). */
function explanation() {
  const best = runners
    .slice(1)
    .map((r) => [r.name, median(results.get(r.name).map((x) => x.eps)) / lockstep])
    .sort((a, b) => b[1] - a[1])[0];
  const same = runners[1];
  const sameCalls = median(results.get(same.name).map((r) => r.generateCalls));
  const spread = Math.max(
    ...runners.map((r) => Math.max(...results.get(r.name).map((x) => x.seconds)) / Math.min(...results.get(r.name).map((x) => x.seconds))),
  );
  const cpus = runners.map((r) => median(results.get(r.name).map((x) => x.cpuSecondsPerEpisode)));
  const [cpuLow, cpuHigh] = [Math.min(...cpus), Math.max(...cpus)];
  return [
    `The issue's target is 1.5x; the best setting here is ${fmt(best[1])}x (${best[0]}). With one model on one CPU engine the`,
    `executor has nothing to overlap: at maxBatchSize ${same.settings.maxBatchSize} it makes ${sameCalls} generate calls of the rows lock-step`,
    `batches (${median(results.get('lock-step').map((r) => r.generateCalls))} calls), because the episodes advance together, the Verifier's calls of a step`,
    "filling one batch and the Searcher's and Answerer's (other stop strings, so other batches) the next ones; the",
    'engine drops rows that stopped, so the batch never waits on finished rows, and a generate costs about its rows x',
    'tokens on a CPU, so smaller, fuller batches (maxBatchSize 8: batch fill near 1) buy nothing and wait in the queue.',
    'What the executor adds is independence, not speed here: no step barrier, timeouts and failures per episode, traces.',
    'It may gain where work can overlap (not measured here): several models (one queue each), a slow tool or retriever,',
    `an engine whose per-call overhead dwarfs its per-row cost (a GPU), cores to spare for modelConcurrency > 1. On this`,
    `${availableParallelism()}-core machine, shared with other jobs (see the load average), one runner's wall time varies up to ${fmt(spread, 1)}x`,
    `between rounds; the CPU seconds per episode (this process's threads, onnxruntime's included) measure the work itself:`,
    `${fmt(cpuLow, 3)} to ${fmt(cpuHigh, 3)} across the runners, the same work.`,
    '',
  ];
}
const table = [
  `## Async graph executor vs lock-step (\`npm run bench:executor\`)`,
  '',
  `${episodes} search episodes per round (${groups} tasks x ${samples}; ${first.turnsMin} to ${first.turnsMax} turns, mean ${fmt(first.turnsMean, 1)}), \`${values.config}\``,
  `${values.set.length > 0 ? `with ${values.set.map((s) => `\`--set ${s}\``).join(', ')} ` : ''}(the search preset's base checkpoint) on the \`${engineName}\` engine, seed 1234, medians of ${rounds} rounds after a warm-up round, the runners`,
  `alternating; ${availableParallelism()} cores, load average ${loadavg()[0].toFixed(2)} at the end. Both sample each row from its own stream`,
  "(`sampleStreams: row`), so the runs sample the same tokens; the executor's figures are summed over its models' queues.",
  '',
  '| runner | episodes/s | vs lock-step | CPU s per episode | generate calls | rows per call | batch fill | queue wait median / p90 (ms) |',
  '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ...rows,
  '',
];
const section = [...table, ...explanation()].join('\n');
console.log(section);
if (!values['dry-run']) {
  const file = path.join(BENCH_DIR, 'RESULTS.md');
  writeFileSync(file, replaceWholeSection(readFileSync(file, 'utf8'), SECTION, section));
}
process.exit(0);
