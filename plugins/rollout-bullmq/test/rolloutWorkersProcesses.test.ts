import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { runBin, startBin, type BinProcess } from '../../../test/support/cliRunner.js';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { REDIS_MISSING, redisAvailable, startRedis, type RedisServer } from '../../../test/support/redisServer.js';

// Real processes, as a user runs them: redis-server, `drmas rollout-worker` children and `drmas train`, on the math preset's
// tiny model (4 prompts x 2 samples, 3 steps, no evaluation).
const hasRedis = redisAvailable();
if (!hasRedis) console.warn(REDIS_MISSING);
const SMALL = ['--set', 'trainer.steps=3', '--set', 'eval.atStart=false', '--set', 'eval.atEnd=false'];
const SIZE = ['--set', 'rollout.promptsPerStep=4', '--set', 'rollout.samplesPerPrompt=2'];

type MetricsLine = Record<string, number>;

function metricsOf(runDir: string): MetricsLine[] {
  return readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as MetricsLine);
}

/** Every key but timings and throughput, which differ between any two runs. */
function learningMetrics(lines: MetricsLine[]): MetricsLine[] {
  return lines.map((line) =>
    Object.fromEntries(Object.entries(line).filter(([key]) => !key.startsWith('timing/') && !key.startsWith('perf/'))),
  );
}

/** Equal keys, and values equal to 1e-6 relative (the engines' float32 sums differ in the last bits with the padding). */
function expectSameMetrics(actual: MetricsLine[], expected: MetricsLine[]): void {
  const a = learningMetrics(actual);
  const b = learningMetrics(expected);
  expect(a.map((line) => Object.keys(line).sort())).toEqual(b.map((line) => Object.keys(line).sort()));
  a.forEach((line, i) => {
    for (const [key, value] of Object.entries(line)) {
      const want = b[i]![key]!;
      if (Math.abs(value - want) > 1e-6 * Math.max(1, Math.abs(want)))
        throw new Error(`step ${line.step} ${key}: ${value} with workers, ${want} in-process`);
    }
  });
}

(hasRedis ? describeSlow : describe.skip)('rollout workers as processes (slow)', () => {
  let redis: RedisServer;
  let dir: string;
  let inProcess: MetricsLine[];
  const workers: BinProcess[] = [];

  const workerArgs = (runDir: string, extra: string[] = []) => [
    'rollout-worker',
    '--config',
    'examples/math/workers.json',
    '--run-dir',
    runDir,
    '--redis',
    redis.url,
    ...SIZE,
    ...extra,
  ];
  const train = (runDir: string, extra: string[] = []) =>
    startBin([
      'train',
      '--config',
      'examples/math/workers.json',
      '--run-dir',
      runDir,
      '--set',
      `bullmq.redisUrl=${redis.url}`,
      ...SMALL,
      ...SIZE,
      ...extra,
    ]);

  beforeAll(async () => {
    redis = await startRedis();
    dir = mkdtempSync(path.join(tmpdir(), 'drmas-workers-'));
    // The reference: the same run in-process, with the row-keyed sampling streams workers use.
    const local = runBin(
      [
        'train',
        '--config',
        'examples/math/drmas.config.json',
        '--run-dir',
        path.join(dir, 'local'),
        '--set',
        'rollout.sampleStreams=row',
        ...SMALL,
        ...SIZE,
      ],
      undefined,
      180_000,
    );
    if (local.code !== 0) throw new Error(local.stderr);
    inProcess = metricsOf(path.join(dir, 'local'));
  }, 200_000);

  afterAll(async () => {
    for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('two workers: the metrics equal the in-process run; each step reloads the published weights; SIGTERM stops a worker cleanly', async () => {
    const runDir = path.join(dir, 'two');
    const pair = [startBin(workerArgs(runDir)), startBin(workerArgs(runDir))];
    workers.push(...pair);
    const trainer = train(runDir);
    const result = await trainer.exited;
    expect(result.code).toBe(0);
    expectSameMetrics(metricsOf(runDir), inProcess);
    const jobs = pair.map((w) => (w.output().match(/ prompt group \d+ \(/g) ?? []).length);
    expect(jobs[0]! + jobs[1]!).toBe(3 * 4);
    // Versions 0, 1, 2: the weights before each of the 3 steps; a worker loads each version it samples with once.
    for (const worker of pair) {
      const loads = [...worker.output().matchAll(/loaded weights v(\d+)/g)].map((m) => Number(m[1]));
      expect(loads).toEqual([...new Set(loads)].sort());
    }
    for (const worker of pair) worker.child.kill('SIGTERM');
    for (const worker of pair) {
      const exit = await worker.exited;
      expect(exit.code).toBe(0);
      expect(exit.stderr).toMatch(/stopped after \d+ job\(s\)/);
    }
  }, 180_000);

  test('a worker killed (SIGKILL) in the middle of a step: its prompt group runs on another worker, every episode once, and the metrics still equal the in-process run', async () => {
    const runDir = path.join(dir, 'killed');
    const lock = ['--set', 'bullmq.lockDuration=2'];
    const doomed = startBin(workerArgs(runDir, [...lock, '--set', 'bullmq.jobTimeout=60']));
    workers.push(doomed);
    const trainer = train(runDir, lock);
    await doomed.waitFor('step 1 prompt group 3', 120_000);
    // Killed while it holds step 2's first job: the survivor, started only now, takes over what it left.
    await doomed.waitFor('loaded weights v1', 60_000);
    doomed.child.kill('SIGKILL');
    const survivor = startBin(workerArgs(runDir, lock));
    workers.push(survivor);
    const result = await trainer.exited;
    expect(result.code).toBe(0);
    expectSameMetrics(metricsOf(runDir), inProcess);
    const steps = metricsOf(runDir).map((line) => line['episode/count']);
    expect(steps).toEqual([8, 8, 8]);
    // Step 2's groups ran once each between the two; the one the doomed worker held when it died ran on the survivor.
    const ran = (worker: BinProcess, step: number) =>
      (worker.output().match(new RegExp(`step ${step} prompt group \\d+ \\(`, 'g')) ?? []).length;
    expect(ran(doomed, 2) + ran(survivor, 2)).toBe(4);
    expect(ran(survivor, 3)).toBe(4);
    // The survivor started with stale (no) weights and loaded the current version before it sampled.
    expect(survivor.output()).toMatch(/loaded weights v1[\s\S]*step 2 prompt group/);
    survivor.child.kill('SIGTERM');
    expect((await survivor.exited).code).toBe(0);
  }, 240_000);
});
