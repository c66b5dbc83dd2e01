// Rollout workers on BullMQ: episodes per second with 1, 2 and 4 `drmas rollout-worker` processes on a fixed workload (the
// math preset's tiny model, prompt groups drawn from its environment), against the same episodes in one process.
// usage: npm run build && node bench/rolloutWorkers.mjs [--rounds 3] [--groups 16] [--samples 4] [--workers 1,2,4]
// Needs redis-server (apt-get install redis-server); starts its own on a free loopback port. Each worker count has
// its own queue and processes, all started (and warmed) before the first round; the rounds alternate the counts.
// Prints one JSON line per measurement and a summary, and writes the table into bench/RESULTS.md.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createKernel, WorkerGroups } from '@drmas/core';
import { EpisodeRunner } from '@drmas/plugin-orchestra';
import { bullmqSection, RolloutQueue } from '@drmas/plugin-rollout-bullmq';
import { median } from './lib/workloads.mjs';
import { replaceWholeSection } from './lib/resultsSections.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const rounds = Number(option('rounds', '3'));
const groups = Number(option('groups', '16'));
const samples = Number(option('samples', '4'));
const counts = option('workers', '1,2,4').split(',').map(Number);
const config = 'examples/math/workers.json';
/** onnxruntime's intra-op threads of each worker (`models.policy.threads`): 1, so N workers use N cores. */
const threads = Number(option('threads', '1'));

/** What limits the scaling on a machine like this one (kept beside the table it explains). */
/** What limits the scaling on a machine like this one, with the run's figures (kept beside the table it explains). */
function ceiling(rows) {
  const row = (n) => rows.find((r) => r.n === n);
  const [one, two, four, local] = [row(1), row(2), row(4), row(0)];
  const x = (r) => (r?.ratio === undefined ? '?' : r.ratio.toFixed(2));
  return [
    `Target: at least 0.8 x N up to the cores available. This machine has ${availableParallelism()} cores: 2 workers give ${x(two)}x one worker`,
    `(${two?.efficiency?.toFixed(2) ?? '?'} x N), 4 workers ${x(four)}x. Beyond the cores, more workers only contend for them. Beside the`,
    "workers run the trainer's side (this script: enqueueing, waiting for results through Redis, decoding them) and",
    'redis-server, so N workers never have N cores to themselves. A worker gains little from more onnxruntime threads',
    "here: one prompt group's generate calls multiply matrices of a few rows, too small to split, and the single-threaded",
    "JavaScript of an episode (sampling, tokenizing, the orchestra's blocks) dominates. For the same reason the in-process",
    `run, which batches every group into one call per agent, is ${one && local ? (local.eps / one.eps).toFixed(1) : '?'}x one worker: spreading episodes costs`,
    'batching, and pays where workers have cores or machines of their own and the batch is too large for one process.',
    '',
  ];
}

if (spawnSync('redis-server', ['--version']).status !== 0) {
  console.error('bench: redis-server is not installed (apt-get install redis-server, or scripts/install-test-deps.sh)');
  process.exit(1);
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function waitForOutput(child, text, what) {
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk) => {
      output += chunk.toString();
      if (output.includes(text)) {
        child.stdout?.off('data', onData);
        child.stderr?.off('data', onData);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}):\n${output}`)));
  });
}

const dir = mkdtempSync(path.join(tmpdir(), 'drmas-bench-workers-'));
const port = await freePort();
const redisUrl = `redis://127.0.0.1:${port}`;
const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir]);
await waitForOutput(redis, 'Ready to accept connections', 'redis-server');
const children = [];
const queues = [];
try {
  const { kernel } = await createKernel({ cwd: root, configPath: config, overrides: [`bullmq.redisUrl=${redisUrl}`] });
  const runner = kernel.get(EpisodeRunner);
  await runner.environment.init();
  const tasks = runner.environment.batch(0, groups).tasks;
  const weights = { version: 0, tag: 'bench-v0', paths: { policy: kernel.config.models.policy.model } };
  const jobs = tasks.map((task, group) => ({
    step: 1,
    round: 0,
    seed: 1234,
    task,
    group,
    samplesPerTask: samples,
    idPrefix: 's1r0',
    sampleStreams: 'row',
    weights,
  }));
  const settings = bullmqSection.parse({ redisUrl, workerWait: 300 });

  // The same episodes in this process, on the same engine (every group in one batched call per agent).
  await kernel
    .get(WorkerGroups)
    .create(
      { config: kernel.config, container: kernel.container, runDir: dir, signal: new AbortController().signal, log: () => {} },
      { reference: false, samplingOnly: true },
    );
  const local = async () => {
    const started = performance.now();
    const run = await runner.run({ tasks, samplesPerTask: samples, seed: 1234, idPrefix: 's1r0', sampleStreams: 'row' });
    return { seconds: (performance.now() - started) / 1000, episodes: run.trajectories.length, workersUsed: 1 };
  };

  for (const n of counts) {
    const queue = `bench-workers-${n}`;
    queues.push({
      n,
      queue: await RolloutQueue.open(
        queue,
        settings,
        () => '',
        (m) => console.error(`bench: ${m}`),
      ),
    });
    for (let i = 0; i < n; i++) {
      const child = spawn(
        process.execPath,
        [
          path.join(root, 'core/bin/drmas.js'),
          'rollout-worker',
          '--config',
          config,
          '--queue',
          queue,
          '--redis',
          redisUrl,
          '--set',
          `models.policy.threads=${threads}`,
        ],
        {
          cwd: root,
          env: { ...process.env, NODE_OPTIONS: '' },
        },
      );
      children.push(child);
      await waitForOutput(child, 'takes jobs from queue', `worker ${n}/${i}`);
    }
  }
  const remote = (queue) => async () => {
    const started = performance.now();
    const done = await queue.run(jobs);
    return { seconds: (performance.now() - started) / 1000, episodes: done.trajectories.length, workersUsed: done.workers.size };
  };
  const engines = [
    { name: 'in-process', n: 0, run: local },
    ...queues.map(({ n, queue }) => ({ name: `${n} worker${n > 1 ? 's' : ''}`, n, run: remote(queue) })),
  ];
  // Warm-up: every engine once (the workers load the weights, onnxruntime builds its sessions).
  for (const engine of engines) await engine.run();
  const results = new Map(engines.map((e) => [e.name, []]));
  for (let r = 0; r < rounds; r++) {
    // Alternate the order every round, so drift in the machine's load falls on every count alike.
    const order = r % 2 === 0 ? engines : [...engines].reverse();
    for (const engine of order) {
      const measured = await engine.run();
      const record = {
        bench: 'rollout-workers',
        engine: engine.name,
        workers: engine.n,
        round: r,
        groups,
        samples,
        ...measured,
        episodesPerSecond: measured.episodes / measured.seconds,
      };
      console.log(JSON.stringify(record));
      results.get(engine.name).push(record);
    }
  }
  const rate = (name) => median(results.get(name).map((x) => x.episodesPerSecond));
  const one = rate(engines.find((e) => e.n === 1)?.name ?? 'in-process');
  const rows = engines.map((e) => {
    const eps = rate(e.name);
    const ratio = e.n > 0 ? eps / one : undefined;
    return {
      name: e.name,
      n: e.n,
      eps,
      ratio,
      efficiency: ratio === undefined ? undefined : ratio / e.n,
      workersUsed: Math.max(...results.get(e.name).map((x) => x.workersUsed)),
    };
  });
  const summary = { bench: 'rollout-workers-summary', cores: availableParallelism(), rows };
  console.log(JSON.stringify(summary));
  writeSection(renderSection(rows, results));
} finally {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)))));
  for (const { queue } of queues) await queue.close();
  redis.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}

function renderSection(rows, results) {
  const cores = availableParallelism();
  const lines = [
    '## Rollout workers (BullMQ): episodes per second by worker processes',
    '',
    `Written by \`node bench/rolloutWorkers.mjs\` (\`npm run bench:workers\`) on ${new Date().toISOString()}: ${groups} prompt groups x ${samples} episodes`,
    `of the math preset (tiny model on onnx, solver + verifier, up to 2 solves), medians of ${rounds} rounds that alternate the`,
    `order of the engines, after a warm-up round. Each worker runs onnxruntime with ${threads} intra-op thread${threads === 1 ? '' : 's'}`,
    `(\`--set models.policy.threads=${threads}\`), the in-process run with ${cores}. ${cpus()[0]?.model ?? 'CPU'}, ${cores} cores, load average at the end ${loadavg()
      .map((x) => x.toFixed(2))
      .join(', ')}.`,
    '',
    '| engine | episodes/s | x 1 worker | efficiency (x / N) | workers that took jobs |',
    '|---|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.eps.toFixed(2)} | ${r.ratio === undefined ? '-' : r.ratio.toFixed(2)} | ${r.efficiency === undefined ? '-' : r.efficiency.toFixed(2)} | ${r.workersUsed} |`,
    ),
    '',
    `Each round (episodes/s): ${rows
      .map(
        (r) =>
          `${r.name} ${results
            .get(r.name)
            .map((x) => x.episodesPerSecond.toFixed(2))
            .join(' / ')}`,
      )
      .join('; ')}.`,
    '',
    ...ceiling(rows),
    '',
  ];
  return lines.join('\n');
}

/** Replaces this script's section of RESULTS.md (bench/run.mjs keeps it when it rewrites the file). */
function writeSection(section) {
  const file = path.join(here, 'RESULTS.md');
  writeFileSync(file, replaceWholeSection(readFileSync(file, 'utf8'), 'rollout-workers', section));
  console.error('bench: wrote the rollout-workers section of bench/RESULTS.md');
}
