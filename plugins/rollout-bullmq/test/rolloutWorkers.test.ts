import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { Worker } from 'bullmq';
import { DrmasError, makeTurn, type EnvTask } from '@drmas/core';
import { bullmqSection, KEY_PREFIX, queueNameFor, RolloutQueue, type EpisodeJobData } from '../src/index.js';
import { runCli } from '../../../test/support/cliRunner.js';
import { freePort, REDIS_MISSING, redisAvailable, startRedis, type RedisServer } from '../../../test/support/redisServer.js';
import { REPO_ROOT } from '../../../test/support/tempProject.js';

const MATH = 'examples/math/drmas.config.json';
const WORKERS = 'examples/math/workers.json';

describe('configuration mistakes stop before anything runs', () => {
  test('rollout.workers: bullmq without the plugin names the key and the plugin to add', async () => {
    const result = await runCli(['train', '--config', MATH, '--set', 'rollout.workers=bullmq', '--set', 'trainer.steps=1']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error CONFIG_INVALID');
    expect(result.stderr).toContain('rollout.workers');
    expect(result.stderr).toContain('add "rollout-bullmq" to plugins');
  });

  test('position-keyed sampling streams cannot be split across workers', async () => {
    const result = await runCli(['train', '--config', WORKERS, '--set', 'rollout.sampleStreams=position', '--set', 'trainer.steps=1']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error CONFIG_INVALID');
    expect(result.stderr).toContain('rollout.sampleStreams');
  });

  test('a worker that is not told which run to serve names --run-dir', async () => {
    const result = await runCli(['rollout-worker', '--config', WORKERS]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error INVALID_ARGUMENT');
    expect(result.stderr).toContain('--run-dir');
  });

  test('drmas worker, the old name, says the new one on one line and runs drmas rollout-worker', async () => {
    const result = await runCli(['worker', '--config', WORKERS]);
    expect(result.code).toBe(1);
    const [notice, ...rest] = result.stderr.split('\n');
    expect(notice).toBe('drmas: `drmas worker` is deprecated since 0.2.0 and runs `drmas rollout-worker`; use that name');
    expect(rest.join('\n')).not.toContain('deprecated');
    // What rollout-worker itself says without --run-dir.
    expect(result.stderr).toContain('error INVALID_ARGUMENT (--run-dir)');
    const help = await runCli(['worker', '--help']);
    expect(help.stdout).toContain('usage: drmas rollout-worker --config PATH');
  });

  test('a worker with a bad --concurrency or --redis names the option', async () => {
    const concurrency = await runCli(['rollout-worker', '--config', WORKERS, '--run-dir', 'runs/x', '--concurrency', '0']);
    expect(concurrency.code).toBe(1);
    expect(concurrency.stderr).toContain('--concurrency');
    const redis = await runCli(['rollout-worker', '--config', WORKERS, '--run-dir', 'runs/x', '--redis', 'http://:s3cret-pw@127.0.0.1:1']);
    expect(redis.code).toBe(1);
    expect(redis.stderr).toContain('--redis expects a redis:// URL, got "http://***@127.0.0.1:1"');
  });

  test('Redis unreachable: SERVICE_FAILED with the URL (its password redacted) and how to start redis-server, for the worker and the trainer', async () => {
    const port = await freePort();
    const url = `redis://:s3cret-pw@127.0.0.1:${port}`;
    const shown = `redis://***@127.0.0.1:${port}`;
    const worker = await runCli(['rollout-worker', '--config', WORKERS, '--run-dir', 'runs/x', '--redis', url]);
    expect(worker.code).toBe(1);
    expect(worker.stderr).toContain(`error SERVICE_FAILED (--redis): Redis at ${shown} is unreachable`);
    expect(worker.stderr).toContain(`redis-server --port ${port}`);
    const trainer = await runCli([
      'train',
      '--config',
      WORKERS,
      '--set',
      `bullmq.redisUrl=${url}`,
      '--set',
      'trainer.steps=1',
      '--set',
      'eval.atStart=false',
      '--set',
      'eval.atEnd=false',
      '--run-dir',
      path.join(REPO_ROOT, '.drmas-cache', 'test-redis-down'),
    ]);
    expect(trainer.code).toBe(1);
    expect(trainer.stderr).toContain(`SERVICE_FAILED`);
    expect(trainer.stderr).toContain(`Redis at ${shown} is unreachable`);
    expect(trainer.stderr).not.toMatch(/\n\s+at /);
    expect(`${worker.stderr}${trainer.stderr}`).not.toContain('s3cret-pw');
  }, 60_000);
});

describe('queue names', () => {
  test('one per run directory: the same folder by any path gives one name, two folders two', () => {
    expect(queueNameFor('/tmp/runs/a')).toBe(queueNameFor('/tmp/runs/../runs/a'));
    expect(queueNameFor('/tmp/runs/a')).not.toBe(queueNameFor('/tmp/other/a'));
    expect(queueNameFor('/tmp/runs/my run')).toMatch(/^rollouts-my_run-[0-9a-f]{12}$/);
  });
});

const hasRedis = redisAvailable();
if (!hasRedis) console.warn(REDIS_MISSING);
const describeRedis = hasRedis ? describe : describe.skip;

describeRedis('the trainer end of the queue, on a real redis-server', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  const task: EnvTask = { id: 't0', dataSource: 'test', question: 'q', answer: 'a' } as unknown as EnvTask;
  const group = (index: number): EpisodeJobData => ({
    step: 1,
    rolloutIndex: 0,
    seed: 7,
    task: { ...task, id: `t${index}` },
    group: index,
    samplesPerTask: 1,
    idPrefix: 's1r0',
    sampleStreams: 'row',
    weights: { version: 0, tag: 'x-v0', paths: {} },
  });
  const settings = (overrides: Record<string, unknown>) => bullmqSection.parse({ redisUrl: redis.url, ...overrides });

  test('no worker: after bullmq.workerWait the step fails with SERVICE_FAILED saying how to start one', async () => {
    const logged: string[] = [];
    const queue = await RolloutQueue.open(
      'no-worker',
      settings({ workerWait: 1.5 }),
      () => 'drmas rollout-worker --run-dir R',
      (m) => logged.push(m),
    );
    try {
      const error = await queue.run([group(0)]).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(DrmasError.is(error) && error.code).toBe('SERVICE_FAILED');
      expect((error as DrmasError).message).toContain('no rollout worker connected to queue no-worker');
      expect((error as DrmasError).hint).toContain('drmas rollout-worker --run-dir R');
      expect(logged.join('\n')).toContain('Start one: drmas rollout-worker --run-dir R');
    } finally {
      await queue.close();
    }
  }, 20_000);

  test('results come back in group order whatever order workers finish in; a group that fails every attempt fails the step naming it', async () => {
    const queue = await RolloutQueue.open(
      'order',
      settings({ attempts: 2, backoff: 0 }),
      () => '',
      () => {},
    );
    const tries = new Map<number, number>();
    const worker = new Worker<EpisodeJobData>(
      'order',
      async (job) => {
        tries.set(job.data.group, (tries.get(job.data.group) ?? 0) + 1);
        if (job.data.task.id === 'bad') throw new Error('engine exploded');
        // Later groups finish first.
        await new Promise((resolve) => setTimeout(resolve, 40 * (3 - job.data.group)));
        return {
          rolloutWorker: `w${job.data.group % 2}`,
          trajectories: [{ groupId: `g${job.data.group}`, trajectoryId: `g${job.data.group}-n0`, turns: [] }],
        };
      },
      { connection: { url: redis.url }, prefix: KEY_PREFIX, concurrency: 3 },
    );
    try {
      const done = await queue.run([group(0), group(1), group(2)]);
      expect(done.trajectories.map((t) => t.groupId)).toEqual(['g0', 'g1', 'g2']);
      expect([...done.rolloutWorkers].sort()).toEqual(['w0', 'w1']);
      const error = await queue.run([group(0), { ...group(1), task: { ...task, id: 'bad' } }]).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(DrmasError.is(error) && error.code).toBe('SERVICE_FAILED');
      expect((error as DrmasError).message).toContain('prompt group 1 of step 1 (task bad) after 2 attempt(s): engine exploded');
      expect(tries.get(1)).toBe(3); // once in the first step, twice (both attempts) in the second
    } finally {
      await worker.close();
      await queue.close();
    }
  }, 20_000);

  test("a result's turns, sent as JSON, are made again: `step`, the deprecated name of `round`, reads their round", async () => {
    const queue = await RolloutQueue.open(
      'turns',
      settings({}),
      () => '',
      () => {},
    );
    const turn = (round: number, index: number) =>
      makeTurn({
        groupId: 'g0',
        trajectoryId: 'g0-n0',
        agentId: 'solver',
        round,
        workerGroupId: 'policy',
        index,
        promptIds: [1],
        responseIds: [2],
        logProbs: [-1],
        valid: true,
      });
    const sent = { groupId: 'g0', trajectoryId: 'g0-n0', taskId: 't0', done: true, turns: [turn(0, 0), turn(1, 1), turn(2, 2)] };
    const worker = new Worker<EpisodeJobData>('turns', async () => ({ rolloutWorker: 'w0', trajectories: [sent] }), {
      connection: { url: redis.url },
      prefix: KEY_PREFIX,
    });
    try {
      const done = await queue.run([group(0)]);
      const turns = done.trajectories[0]!.turns;
      expect(turns.map((t) => t.round)).toEqual([0, 1, 2]);
      expect(turns.map((t) => t.step)).toEqual([0, 1, 2]);
      expect(JSON.stringify(done.trajectories)).toBe(JSON.stringify([sent]));
    } finally {
      await worker.close();
      await queue.close();
    }
  }, 20_000);
});
