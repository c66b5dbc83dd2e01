import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import type { EnvAction, Environment } from '@drmas/core';
import { MathEnvironment, type MathTask } from '@drmas/plugin-env-math';
import { EnvironmentServer, RemoteEnvironment, type RemoteSettings } from '../src/index.js';
import { CountdownEnvironment } from './support/countdownEnvironment.js';

const servers: EnvironmentServer[] = [];
const clients: RemoteEnvironment[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  await Promise.all(servers.splice(0).map((s) => s.close(0)));
});

async function serve(name: string, environment: Environment, idleTimeoutMs = 60_000): Promise<EnvironmentServer> {
  await environment.init();
  const server = await EnvironmentServer.start({
    environments: new Map([[name, { environment, plugin: `env-${name}` }]]),
    host: '127.0.0.1',
    port: 0,
    idleTimeoutMs,
    maxSessions: 1000,
  });
  servers.push(server);
  return server;
}

function remote(urls: string[], settings: Partial<RemoteSettings> = {}): RemoteEnvironment {
  const client = new RemoteEnvironment({ remote: { urls, retries: 2, backoffMs: 5, maxBackoffMs: 20, ...settings } });
  clients.push(client);
  return client;
}

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

const answer = (content: string): EnvAction => ({ type: 'answer', content, agentId: 'solver', turnIndex: 0 });

describe('the remote environment over a real gRPC server', () => {
  it('hands out the served tasks and scores answers as the environment in-process does', async () => {
    const settings = { seed: 3, levels: [1, 2], testSize: 8 };
    const server = await serve('math', new MathEnvironment(settings));
    const local = new MathEnvironment(settings);
    await local.init();
    const env = remote([server.address]);
    await env.init();
    expect(env.maxRounds).toBe(1);
    expect(env.test().map((t) => t.id)).toEqual(local.test().map((t) => t.id));

    await env.prepare(5, 4);
    const tasks = env.batch(5, 4).tasks;
    const localTasks = local.batch(5, 4).tasks;
    expect(tasks.map((t) => t.id)).toEqual(localTasks.map((t) => t.id));
    const episodes = tasks.map((t) => env.reset(t));
    expect(episodes.map((e) => e.variables())).toEqual(localTasks.map((t) => local.reset(t).variables()));

    // Tasks 0 and 2 get their reference answer, 1 and 3 a wrong one: outcomes 1, 0, 1, 0 by construction.
    const actions = localTasks.map((t: MathTask, i) => answer(i % 2 === 0 ? `so \\boxed{${t.answer}}` : 'so \\boxed{x}'));
    await env.advance(episodes, actions);
    expect(episodes.map((e) => [e.done, e.outcome, e.failure])).toEqual([
      [true, 1, undefined],
      [true, 0, undefined],
      [true, 1, undefined],
      [true, 0, undefined],
    ]);
    const localEpisodes = localTasks.map((t) => local.reset(t));
    await local.advance(localEpisodes, actions);
    expect(episodes.map((e) => e.metrics())).toEqual(localEpisodes.map((e) => ({ ...e.metrics(), remote_failed: 0 })));
    // Every finished episode's session was closed.
    expect(server.stats()).toMatchObject({ openSessions: 0, sessionsCreated: 4, calls: { CreateSessions: 1, Step: 1, CloseSessions: 1 } });
  });

  it('spreads sessions round-robin over two servers and keeps each episode on its server', async () => {
    const [a, b] = [await serve('countdown', new CountdownEnvironment(3)), await serve('countdown', new CountdownEnvironment(3))];
    const env = remote([a.address, b.address]);
    await env.init();
    await env.prepare(0, 6);
    const episodes = env.batch(0, 6).tasks.map((t) => env.reset(t));
    // Step 1: every guess wrong; step 2: right for the even tasks; step 3: the odd ones, still open, guess right.
    await env.advance(
      episodes,
      episodes.map(() => answer('-1')),
    );
    await env.advance(
      episodes,
      episodes.map((e, i) => answer(i % 2 === 0 ? String(i) : '-1')),
    );
    const open = episodes.filter((e) => !e.done);
    expect(open).toHaveLength(3);
    await env.advance(
      open,
      open.map((e) => answer(e.variables().target!)),
    );
    expect(episodes.map((e) => e.outcome)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(episodes.map((e) => e.metrics().guesses)).toEqual([2, 3, 2, 3, 2, 3]);
    // Episodes 0, 2, 4 went to a; 1, 3, 5 to b: three sessions each. Each round reached only the server of its
    // episodes: a's finished at step 2 (two Step calls), b's at step 3 (three).
    expect([a.stats().sessionsCreated, b.stats().sessionsCreated]).toEqual([3, 3]);
    expect(episodes.map((e) => e.server)).toEqual([0, 1, 0, 1, 0, 1]);
    expect([a.stats().calls.Step, b.stats().calls.Step]).toEqual([2, 3]);
    expect(env.stats().sessionsByServer).toEqual({ [a.address]: 3, [b.address]: 3 });
  });

  it('records the episodes of a server that went away as failed, after a bounded number of retries', async () => {
    const [a, b] = [await serve('countdown', new CountdownEnvironment(3)), await serve('countdown', new CountdownEnvironment(3))];
    const env = remote([a.address, b.address], { retries: 2 });
    await env.init();
    await env.prepare(0, 4);
    const episodes = env.batch(0, 4).tasks.map((t) => env.reset(t));
    await env.advance(
      episodes,
      episodes.map(() => answer('-1')),
    );
    await b.close(0);
    const before = env.stats();
    await env.advance(
      episodes,
      episodes.map((e) => answer(e.variables().target!)),
    );
    // a's episodes (0 and 2) finish; b's (1 and 3) fail with the server, the status and the attempts named.
    expect(episodes.map((e) => [e.done, e.outcome])).toEqual([
      [true, 1],
      [true, 0],
      [true, 1],
      [true, 0],
    ]);
    for (const failed of [episodes[1]!, episodes[3]!]) {
      expect(failed.failure).toMatch(new RegExp(`^server ${b.address}: Step failed with UNAVAILABLE after 3 attempts: `));
      expect(failed.metrics().remote_failed).toBe(1);
    }
    expect(episodes[0]!.failure).toBeUndefined();
    // One Step call to b: 1 attempt + 2 retries, no more.
    expect(env.stats().retries - before.retries).toBe(2);
    expect(env.stats().failedEpisodes).toBe(2);
  });

  it('gives up on a call past its deadline, retrying it once as configured', async () => {
    const slow = new CountdownEnvironment(3, 400);
    const server = await serve('countdown', slow);
    const env = remote([server.address], { deadlineMs: 100, retries: 1 });
    await env.init();
    await env.prepare(0, 1);
    const [episode] = env.batch(0, 1).tasks.map((t) => env.reset(t));
    const started = Date.now();
    await env.advance([episode!], [answer('0')]);
    expect(episode!.failure).toMatch(new RegExp(`^server ${server.address}: Step failed with DEADLINE_EXCEEDED after 2 attempts`));
    expect(env.stats().retries).toBe(1);
    // Two attempts of 100 ms and a 5 ms backoff, not the environment's 400 ms round.
    expect(Date.now() - started).toBeLessThan(400);
    // The retry found the first attempt still running and waited for it: the environment stepped once, not twice.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(slow.stepCalls).toBe(1);
    expect(server.stats().calls.Step).toBe(2);
  });

  it('closes a session its client left idle, and a later round of it fails as expired', async () => {
    // The idle limit leaves room for a loaded machine between the round and the first check.
    const server = await serve('countdown', new CountdownEnvironment(3), 400);
    const env = remote([server.address]);
    await env.init();
    await env.prepare(0, 1);
    const [episode] = env.batch(0, 1).tasks.map((t) => env.reset(t));
    await env.advance([episode!], [answer('-1')]);
    expect(server.stats().openSessions).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(server.stats()).toMatchObject({ openSessions: 0, sessionsExpired: 1 });
    await env.advance([episode!], [answer('0')]);
    expect(episode!.failure).toBe(
      `server ${server.address}: the round failed with NOT_FOUND: session ${episode!.sessionId} is not open (closed, or idle past 400 ms)`,
    );
  });

  it('refuses an unreachable url and an environment the server does not serve, naming the key', async () => {
    const port = await closedPort();
    const unreachable = remote([`127.0.0.1:${port}`], { retries: 1 });
    await expect(unreachable.init()).rejects.toMatchObject({
      code: 'SERVICE_FAILED',
      key: 'env.remote.urls',
      message: expect.stringMatching(
        new RegExp(`^cannot reach the environment server at 127\\.0\\.0\\.1:${port}: .*UNAVAILABLE after 2 attempts`),
      ),
    });
    const server = await serve('math', new MathEnvironment({ testSize: 2 }));
    const misnamed = remote([server.address], { environment: 'mth' });
    await expect(misnamed.init()).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      key: 'env.remote.environment',
      hint: 'Did you mean "math"?',
    });
  });
});
