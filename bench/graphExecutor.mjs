// The async graph executor against the lock-step runner: episodes per second of the search preset's rollouts and of
// the M-ASK workflow (the search preset's tiny base checkpoint, its rollout engine), the same tasks, seed and model
// for both runners, episodes of mixed length (the Verifier, or M-ASK's Searcher, decides how long each goes on). Each
// setting is measured in-process and with the retriever served over HTTP by `drmas retriever serve --latency-ms`,
// one model for all agents or one model per agent. Reports, per runner, generate calls, batch fill (rows per call /
// maxBatchSize) and queue waits, and writes the table into bench/RESULTS.md.
// usage: npm run build && node bench/graphExecutor.mjs [--rounds 3] [--groups 8] [--samples 5] [--latency-ms 300] [--settings a,b] [--dry-run]   (npm run bench:executor)
import { spawn } from 'node:child_process';
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
const TARGET = 1.5;
const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    groups: { type: 'string', default: '8' },
    samples: { type: 'string', default: '5' },
    'latency-ms': { type: 'string', default: '300' },
    /** Settings to measure (ids below, comma-separated); default all. */
    settings: { type: 'string' },
    'dry-run': { type: 'boolean', default: false },
  },
});
const rounds = Number(values.rounds);
const groups = Number(values.groups);
const samples = Number(values.samples);
const latencyMs = Number(values['latency-ms']);
const episodes = groups * samples;

/** What is measured: a config (and overrides), with the retriever in-process (BM25) or over HTTP with latency. */
const SETTINGS = [
  { id: 'search', label: 'search preset, in-process BM25', config: 'examples/search/drmas.config.json', http: false },
  { id: 'search-http', label: `search preset, HTTP retriever ${latencyMs} ms`, config: 'examples/search/drmas.config.json', http: true },
  {
    id: 'search-separate-http',
    label: `search preset, a model per agent, HTTP retriever ${latencyMs} ms`,
    config: 'examples/search/non-shared.json',
    http: true,
  },
  { id: 'm-ask', label: 'M-ASK shared, in-process BM25', config: 'examples/workflows/m-ask/shared.config.json', http: false },
  {
    id: 'm-ask-http',
    label: `M-ASK shared, HTTP retriever ${latencyMs} ms`,
    config: 'examples/workflows/m-ask/shared.config.json',
    http: true,
  },
  {
    id: 'm-ask-separate-http',
    label: `M-ASK, a model per agent, HTTP retriever ${latencyMs} ms`,
    config: 'examples/workflows/m-ask/separate.config.json',
    http: true,
  },
].filter((s) => !values.settings || values.settings.split(',').includes(s.id));

const EXECUTORS = [
  { maxBatchSize: episodes, maxWaitMs: 2, modelConcurrency: 1 },
  { maxBatchSize: 8, maxWaitMs: 2, modelConcurrency: 1 },
  { maxBatchSize: 8, maxWaitMs: 2, modelConcurrency: 2 },
];

/** `drmas retriever serve` as a user starts it, over the preset's knowledge base (env.entities 300, seed 0, topk 2). */
async function startRetriever() {
  const child = spawn(
    process.execPath,
    [
      path.join(REPO_ROOT, 'core/bin/drmas.js'),
      'retriever',
      'serve',
      '--port',
      '0',
      '--entities',
      '300',
      '--seed',
      '0',
      '--topk',
      '2',
    ].concat(['--latency-ms', String(latencyMs)]),
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const url = await new Promise((resolve, reject) => {
    let text = '';
    child.stderr.on('data', (chunk) => {
      text += chunk;
      const match = /retriever on (http:\/\/\S+)\/retrieve/.exec(text);
      if (match) resolve(match[1]);
    });
    child.on('exit', (code) => reject(new Error(`drmas retriever serve exited with ${code}: ${text}`)));
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

const dir = mkdtempSync(path.join(tmpdir(), 'drmas-bench-executor-'));
const { kind: _kind, ...defaults } = executorSection.parse({});

/** The runners of one setting: lock-step and the executor settings, on one kernel's engines. */
async function runnersFor(setting, retrieverUrl) {
  const overrides = setting.http ? [`env.retriever.urls=["${retrieverUrl}"]`] : [];
  const { kernel } = await createKernel({ cwd: REPO_ROOT, configPath: setting.config, overrides });
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
  const orchestra = workflow.orchestra();
  const base = { environment, orchestra, agents: workflow.agents(), engineFor, settings: kernel.config.orchestra };
  const models = new Set(Object.keys(orchestra.agents).map((agent) => engineFor(agent).workerGroupId));
  const engineName = engineFor(Object.keys(orchestra.agents)[0]).backend.name.replace(/:.*/, '');
  const request = { tasks: environment.batch(0, groups).tasks, samplesPerTask: samples, seed: 1234, idPrefix: 's1r0' };
  const runners = [
    { name: 'lock-step', run: () => new OrchestraRunner(base).run({ ...request, sampleStreams: 'row' }) },
    ...EXECUTORS.map((settings) => ({
      name: `async, maxBatchSize ${settings.maxBatchSize}, maxWaitMs ${settings.maxWaitMs}, modelConcurrency ${settings.modelConcurrency}`,
      settings,
      run: () => new GraphExecutor({ ...base, executor: { ...defaults, ...settings } }).run(request),
    })),
  ];
  return { runners, models: models.size, engineName };
}

function measure(runner, run, seconds, cpuSeconds) {
  const calls = Object.values(run.generateCalls).reduce((a, b) => a + b, 0);
  const turns = run.trajectories.map((t) => t.turns.length);
  const record = {
    runner: runner.name,
    seconds,
    eps: run.trajectories.length / seconds,
    cpuSecondsPerEpisode: cpuSeconds / run.trajectories.length,
    turnsMin: Math.min(...turns),
    turnsMax: Math.max(...turns),
    turnsMean: turns.reduce((a, b) => a + b, 0) / turns.length,
    tokens: run.trajectories.map((t) => t.turns.map((turn) => turn.responseIds.join(',')).join('|')),
  };
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

async function measureSetting(setting) {
  const retriever = setting.http ? await startRetriever() : undefined;
  try {
    const { runners, models, engineName } = await runnersFor(setting, retriever?.url);
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
        highestLoad = Math.max(highestLoad, loadavg()[0]);
        const { tokens: _tokens, ...shown } = record;
        console.log(JSON.stringify({ setting: setting.id, round, ...shown }));
      }
    }
    const lockTokens = results.get('lock-step')[0].tokens;
    const sameTokens = runners.every((r) => results.get(r.name).every((x) => x.tokens.every((t, i) => t === lockTokens[i])));
    return { setting, runners, results, models, engineName, sameTokens };
  } finally {
    retriever?.stop();
  }
}

let highestLoad = 0;
const measured = [];
for (const setting of SETTINGS) measured.push(await measureSetting(setting));
rmSync(dir, { recursive: true, force: true });

const fmt = (x, digits = 2) => (x === undefined ? '-' : x.toFixed(digits));
const medianOf = (records, key) => median(records.map((r) => r[key]));
const rows = [];
const verdicts = [];
for (const { setting, runners, results, models } of measured) {
  const lockstep = medianOf(results.get('lock-step'), 'eps');
  for (const runner of runners) {
    const records = results.get(runner.name);
    const eps = medianOf(records, 'eps');
    const last = records.at(-1);
    rows.push(
      `| ${setting.label} | ${runner.name} | ${fmt(eps)} | ${fmt(eps / lockstep)}x | ${fmt(medianOf(records, 'cpuSecondsPerEpisode'), 3)} | ` +
        `${medianOf(records, 'generateCalls')} | ${fmt(last.rowsPerCall, 1)} | ${fmt(last.batchFill)} | ${fmt(last.queueWaitMedianMs, 0)} / ${fmt(last.queueWaitP90Ms, 0)} |`,
    );
  }
  const [bestName, best] = runners
    .slice(1)
    .map((r) => [r.name, medianOf(results.get(r.name), 'eps') / lockstep])
    .sort((a, b) => b[1] - a[1])[0];
  verdicts.push({ setting, bestName, best, models });
}

const turnsLine = measured
  .map(({ setting, results }) => {
    const r = results.get('lock-step').at(-1);
    return `${setting.label}: ${r.turnsMin} to ${r.turnsMax} turns, mean ${fmt(r.turnsMean, 1)}`;
  })
  .join('; ');
const met = verdicts.filter((v) => v.best >= TARGET);
const missed = verdicts.filter((v) => v.best < TARGET);
const listOf = (vs) => vs.map((v) => `${v.setting.label} (${fmt(v.best)}x)`).join(', ');
const cpuSpread = measured.map(({ setting, runners, results }) => {
  const cpus = runners.map((r) => medianOf(results.get(r.name), 'cpuSecondsPerEpisode'));
  return `${setting.id} ${fmt(Math.min(...cpus), 3)} to ${fmt(Math.max(...cpus), 3)}`;
});
const spreads = measured.map(({ setting, runners, results }) => {
  const ratio = Math.max(
    ...runners.map((r) => Math.max(...results.get(r.name).map((x) => x.seconds)) / Math.min(...results.get(r.name).map((x) => x.seconds))),
  );
  return `${fmt(ratio, 2)}x (${setting.id})`;
});
const section = [
  `## Async graph executor vs lock-step (\`npm run bench:executor\`)`,
  '',
  `${episodes} episodes per round (${groups} tasks x ${samples}) per setting, the search preset's base checkpoint on the`,
  `\`${measured[0]?.engineName}\` rollout engine for every model, seed 1234, medians of ${rounds} rounds after a warm-up round, the runners alternating;`,
  `${availableParallelism()} cores, load average up to ${highestLoad.toFixed(2)} during the run. Both runners sample each row from its own stream`,
  `(\`sampleStreams: row\`): ${
    measured.every((m) => m.sameTokens)
      ? 'every runner sampled the same tokens as lock-step in every setting'
      : `the same tokens as lock-step in ${
          measured
            .filter((m) => m.sameTokens)
            .map((m) => m.setting.id)
            .join(', ') || 'no setting'
        }`
  }.`,
  `The HTTP settings serve the knowledge base with \`drmas retriever serve --latency-ms ${latencyMs}\` (a child process): each`,
  `request waits ${latencyMs} ms before BM25 answers, the low end of a remote search API (web-search APIs answer in some`,
  '300 to 1000 ms); lock-step sends one request per round (or M-ASK search round) for all its rows, the executor one',
  "per episode's search, in flight together. The executor's figures are summed over its models' queues. Turns per episode:",
  `${turnsLine}.`,
  '',
  '| setting | runner | episodes/s | vs lock-step | CPU s per episode | generate calls | rows per call | batch fill | queue wait median / p90 (ms) |',
  '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ...rows,
  '',
  `The issue's target is ${TARGET}x. ${met.length > 0 ? `Met in: ${listOf(met)}.` : 'Met in no setting.'} ${missed.length > 0 ? `Not met in: ${listOf(missed)}.` : ''}`,
  "Where the executor can gain: a slow retriever, whose wait overlaps other episodes' generation only when episodes",
  "reach their searches at different times (the search preset's episodes step together: the Verifier, then the",
  "Searcher, then the retrieval, for every row, so all of them wait at once, as in lock-step; M-ASK's episodes end",
  "their rounds at different times); a model per agent, each model's queue running its own batches; modelConcurrency > 1",
  'with cores to spare. One model on one CPU engine with the retriever in-process has the least to overlap: the',
  `engine's work is the same either way (CPU seconds below). On this ${availableParallelism()}-core machine, shared with other jobs (load average above), one runner's wall time varies`,
  `between rounds by up to ${spreads.join(', ')} (max / min seconds), so ratios within that spread are noise. CPU seconds`,
  "per episode (this process's threads, onnxruntime's included; not the retriever's) measure the work itself:",
  `${cpuSpread.join('; ')}.`,
  '',
].join('\n');
console.log(section);
if (!values['dry-run']) {
  const file = path.join(BENCH_DIR, 'RESULTS.md');
  writeFileSync(file, replaceWholeSection(readFileSync(file, 'utf8'), SECTION, section));
}
process.exit(0);
