import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DrmasError } from '@drmas/core';
import { runCli } from '../../../test/support/cliRunner.js';
import { RecordingProxy } from '../../../test/support/recordingProxy.js';
import { TempProject } from '../../../test/support/tempProject.js';
import { TINKER_SERVER_TRAITS } from '../src/client/tinkerServers.js';
import type { TinkerServer } from '../src/server/TinkerServer.js';
import type { TinkerClientOptions } from '../src/client/TinkerClient.js';
import { client as fixtureClient, relativeError, startServer, stepView, tinkerBackend, updateRequest } from './tinkerFixtures.js';

/**
 * The heartbeat test's server unloads a session after 2 s without a heartbeat (its clients beat every 50 ms). The
 * others share a server whose sessions outlive a loaded machine's pauses: the server runs in this process, so an
 * engine loading in it holds back the heartbeats it would read.
 */
const SESSION_TIMEOUT_MS = 2_000;
const SHARED_SESSION_TIMEOUT_MS = 120_000;
const client = (baseUrl: string, options: Partial<TinkerClientOptions> = {}) => fixtureClient(baseUrl, { heartbeatMs: 200, ...options });

/**
 * What today's Tinker servers require, against `drmas tinker-server` (which behaves as SkyRL tx and takes hosted
 * Tinker's protobuf and sampling sessions): sessions and heartbeats, a seq_id on every request, an answer lost after
 * a forward_backward was sent, failed futures as HTTP 400, held polls, and the hosted wire giving the JSON wire's
 * numbers.
 */

let server: TinkerServer;
let url: string;
beforeAll(async () => {
  ({ server, url } = await startServer({ pending: '408', holdMs: 20 }, SHARED_SESSION_TIMEOUT_MS));
});
afterAll(async () => {
  await server.stop();
});

async function post(route: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}/api/v1/${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('sessions and heartbeats (SkyRL: create_model needs a session; a session without heartbeats is unloaded)', () => {
  it('refuses create_model without a session, as SkyRL does', async () => {
    const refused = await post('create_model', { base_model: 'tiny', lora_config: { rank: 8 } });
    expect(refused).toEqual({ status: 404, body: { detail: 'Session not found' } });
  });

  it('keeps a model whose session heartbeats past the timeout; unloads one whose heartbeats stopped', async () => {
    const sweeping = await startServer({ pending: '408', holdMs: 20 }, SESSION_TIMEOUT_MS);
    try {
      const alive = await tinkerBackend(client(sweeping.url, { heartbeatMs: 50 }));
      const stopped = client(sweeping.url, { heartbeatMs: 50 });
      const silent = await tinkerBackend(stopped);
      stopped.close();
      await new Promise((resolve) => setTimeout(resolve, SESSION_TIMEOUT_MS * 1.8)); // swept every second
      await expect(alive.score({ batch: stepView(0) })).resolves.toBeDefined();
      const error = (await silent.score({ batch: stepView(0) }).catch((e: unknown) => e)) as DrmasError;
      expect(error.message).toContain(`HTTP 404: Model "${silent.modelId}" not found`);
      alive.dispose();
    } finally {
      await sweeping.server.stop();
    }
  });
});

describe('seq_id on every request, and an answer lost after the request went out', () => {
  it('numbers each request on a model from 1 (create_model is 0), as the SDK does', async () => {
    const proxy = new RecordingProxy(url, () => false);
    const backend = await tinkerBackend(client(await proxy.start()));
    try {
      await backend.score({ batch: stepView(0) });
      await backend.generate({ prompts: [[3, 7, 1]], maxNewTokens: 2, temperature: 1, seed: 1 });
      const bodies = proxy.requests
        .filter((s) => !s.url.endsWith('retrieve_future') && !s.url.endsWith('session_heartbeat'))
        .map((s): Record<string, unknown> => ({ ...(JSON.parse(s.body) as object), route: s.url.replace('/api/v1/', '') }));
      expect(bodies.map((b) => [b.route, b.seq_id])).toEqual([
        ['create_session', undefined],
        ['create_model', undefined],
        ['forward', 1],
        ['save_weights_for_sampler', 2],
        ['asample', undefined],
      ]);
      expect(bodies[1]).toMatchObject({ model_seq_id: 0, session_id: expect.stringMatching(/^session_/) });
    } finally {
      backend.dispose();
      await proxy.stop();
    }
  });

  it('a forward_backward whose answer was lost is not sent again (the server got it once), and the run is told how to go on', async () => {
    const proxy = new RecordingProxy(url, (route, index) => route === '/api/v1/forward_backward' && index === 0);
    const backend = await tinkerBackend(client(await proxy.start(), { retries: 3 }));
    try {
      const error = (await backend.update(updateRequest(stepView(0), { maxGradNorm: 0 })).catch((e: unknown) => e)) as DrmasError;
      expect(error.code).toBe('SERVICE_FAILED');
      expect(error.message).toContain('forward_backward: the answer was lost after the request was sent');
      expect(error.hint).toContain('--resume');
      expect(proxy.count('/api/v1/forward_backward')).toBe(1);
      expect(proxy.count('/api/v1/optim_step')).toBe(0);
    } finally {
      backend.dispose();
      await proxy.stop();
    }
  });

  it('a forward whose answer was lost is sent again under its seq_id, and the server queues it once', async () => {
    const proxy = new RecordingProxy(url, (route, index) => route === '/api/v1/forward' && index === 0);
    const backend = await tinkerBackend(client(await proxy.start(), { retries: 3, retryDelayMs: 5 }));
    try {
      const scored = await backend.score({ batch: stepView(0) });
      expect(scored.logProbs.length).toBeGreaterThan(0);
      const sent = proxy.requests.filter((s) => s.url === '/api/v1/forward').map((s) => (JSON.parse(s.body) as { seq_id: number }).seq_id);
      expect(sent).toEqual([1, 1]);
      // Both tries got the same future: the second submission found the first by (model_id, seq_id).
      const futures = proxy.requests
        .filter((s) => s.url === '/api/v1/forward')
        .map((s) => (JSON.parse(s.answer!) as { request_id: string }).request_id);
      expect(futures).toHaveLength(2);
      expect(futures[1]).toBe(futures[0]);
    } finally {
      backend.dispose();
      await proxy.stop();
    }
  });
});

describe('futures as SkyRL answers them', () => {
  it('a failed request (HTTP 400 from retrieve_future) fails with the server’s reason', async () => {
    const backend = await tinkerBackend(client(url));
    const project = new TempProject('tinker-pointer');
    try {
      project.write({
        'ckpt/tinker.json': { baseUrl: url, baseModel: 'tiny', modelId: 'model_none', path: 'tinker://model_none/weights/nothing' },
      });
      const error = (await backend.load(project.path('ckpt')).catch((e: unknown) => e)) as DrmasError;
      expect(error.code).toBe('SERVICE_FAILED');
      expect(error.message).toMatch(/load_weights: request \d+ failed: no weights nothing of model_none/);
    } finally {
      backend.dispose();
      project.dispose();
    }
  });

  it('a poll the server holds past the client’s poll timeout is polled again at once, without backing off', async () => {
    server.futures.policy = { ...server.futures.policy, delayMs: 300, holdMs: 10_000 };
    const tinkerClient = client(url, { pollTimeoutMs: 60, retryDelayMs: 5_000 });
    const backend = await tinkerBackend(tinkerClient);
    try {
      const started = Date.now();
      await backend.score({ batch: stepView(0) });
      expect(tinkerClient.stats.timeouts).toBeGreaterThan(0);
      expect(tinkerClient.stats.retries).toBe(0);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      server.futures.policy = { ...server.futures.policy, delayMs: 0, holdMs: 20 };
      backend.dispose();
    }
  });
});

describe("hosted Tinker's wire (protobuf forward_backward, forward as forward_only, chunks, sampling sessions)", () => {
  it('scores and samples what the JSON wire does', async () => {
    const hosted = { ...TINKER_SERVER_TRAITS.hosted, chunk: { datums: 2, bytes: 5_000_000 } };
    const proxy = new RecordingProxy(url, () => false);
    const viaProto = await tinkerBackend(client(await proxy.start()), hosted);
    const viaJson = await tinkerBackend(client(url));
    try {
      const view = stepView(0);
      const [a, b] = [await viaProto.score({ batch: view }), await viaJson.score({ batch: view })];
      expect(relativeError(a.logProbs, b.logProbs)).toBe(0);
      const forwards = proxy.requests.filter((s) => s.url === '/api/v1/forward_backward');
      expect(forwards).toHaveLength(2); // 3 rows in chunks of 2
      expect(proxy.count('/api/v1/forward')).toBe(0);
      const sampled = await viaProto.generate({ prompts: [[3, 7, 1], [8]], maxNewTokens: 3, temperature: 1, seed: 4 });
      expect(sampled).toEqual(await viaJson.generate({ prompts: [[3, 7, 1], [8]], maxNewTokens: 3, temperature: 1, seed: 4 }));
      const samples = proxy.requests.filter((s) => s.url === '/api/v1/asample').map((s) => JSON.parse(s.body) as Record<string, unknown>);
      expect(samples.map((s) => [typeof s.sampling_session_id, s.seq_id, s.model_path])).toEqual([
        ['string', 0, undefined],
        ['string', 1, undefined],
      ]);
    } finally {
      viaProto.dispose();
      viaJson.dispose();
      await proxy.stop();
    }
  });

  it('hosted Tinker trains LoRA only: rank 0 is refused at create, and by validate for a hosted url', async () => {
    const error = (await tinkerBackend(client(url), TINKER_SERVER_TRAITS.hosted, 0).catch((e: unknown) => e)) as DrmasError;
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.key).toBe('models.policy.tinker.loraRank');
    const project = new TempProject('tinker-hosted');
    try {
      project.write({
        'full.json': {
          presets: ['math'],
          plugins: ['backend-tinker'],
          models: {
            policy: { backend: 'tinker', tinker: { baseUrl: 'https://tinker.thinkingmachines.dev/services/tinker-prod', loraRank: 0 } },
          },
        },
      });
      const info = await runCli(['info', '--config', project.path('full.json')], project.dir);
      expect(info.code).toBe(1);
      expect(info.stderr).toContain('error CONFIG_INVALID');
      expect(info.stderr).toContain('hosted Tinker trains LoRA adapters only');
      expect(info.stderr).toContain('models.policy.tinker.loraRank');
    } finally {
      project.dispose();
    }
  });
});

describe('SkyRL drops grad_clip_norm', () => {
  it('a model on SkyRL with maxGradNorm > 0 is refused, naming the key, before anything is sent', async () => {
    const proxy = new RecordingProxy(url, () => false);
    const backend = await tinkerBackend(client(await proxy.start()), TINKER_SERVER_TRAITS.skyrl);
    try {
      const error = (await backend.update(updateRequest(stepView(0), { maxGradNorm: 1 })).catch((e: unknown) => e)) as DrmasError;
      expect(error.code).toBe('CONFIG_INVALID');
      expect(error.key).toBe('models.policy.optimizer.maxGradNorm');
      expect(error.message).toContain('grad_clip_norm');
      expect(proxy.count('/api/v1/forward_backward')).toBe(0);
    } finally {
      backend.dispose();
      await proxy.stop();
    }
  });

  it('8-bit moments are refused, naming the key, before anything is sent: the server holds its own optimizer state', async () => {
    const proxy = new RecordingProxy(url, () => false);
    const backend = await tinkerBackend(client(await proxy.start()), TINKER_SERVER_TRAITS.skyrl);
    try {
      const error = (await backend
        .update(updateRequest(stepView(0), { maxGradNorm: 0, moments: '8bit' }))
        .catch((e: unknown) => e)) as DrmasError;
      expect(error.code).toBe('CONFIG_INVALID');
      expect(error.key).toBe('models.policy.optimizer.moments');
      expect(proxy.count('/api/v1/forward_backward')).toBe(0);
    } finally {
      backend.dispose();
      await proxy.stop();
    }
  });
});
