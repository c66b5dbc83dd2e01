import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DrmasError, PolicyBackend, WeightTensor } from '@drmas/core';
import { readModelFolder } from '@drmas/models';
import { createOnnxPolicyBackend } from '@drmas/plugin-backend-onnx';
import { describeSlow } from '../../../test/support/describeSlow.js';
import type { TinkerClient } from '../src/client/TinkerClient.js';
import type { TinkerServer } from '../src/server/TinkerServer.js';
import { TINKER_CHECKPOINT_FILE, type TinkerCheckpointPointer, type TinkerPolicyBackend } from '../src/TinkerPolicyBackend.js';
import { client, relativeError, SEED, startServer, stepView, tinkerBackend, updateRequest } from './tinkerFixtures.js';

/**
 * The tinker backend against `drmas tinker-server` in this process (real HTTP over loopback), whose models train on
 * the onnx engine, compared with a local onnx engine from the same initial weights updated directly with drmas's loss.
 */

let server: TinkerServer;
let url: string;
let dataDir: string;
/** One server-side model for the file (its first update builds the engine's training graph, the slow part). */
let tinker: TinkerPolicyBackend;
let stats: TinkerClient['stats'];
const scratch = mkdtempSync(path.join(os.tmpdir(), 'drmas-tinker-ckpt-'));

beforeAll(async () => {
  ({ server, url, dataDir } = await startServer());
  const tinkerClient = client(url);
  stats = tinkerClient.stats;
  tinker = await tinkerBackend(tinkerClient);
});
afterAll(async () => {
  await server.stop();
});

function localEngine(): Promise<PolicyBackend> {
  return createOnnxPolicyBackend({ name: 'onnx:local', model: 'tiny', seed: SEED });
}

/** The server-side weights of `backend` now: its sampler checkpoint, read from the server's data folder. */
async function serverWeights(backend: TinkerPolicyBackend): Promise<Map<string, WeightTensor>> {
  const dir = path.join(scratch, `w-${Date.now()}`);
  await backend.save(dir, { optimizer: false });
  const pointer = JSON.parse(readFileSync(path.join(dir, TINKER_CHECKPOINT_FILE), 'utf8')) as TinkerCheckpointPointer;
  const [, modelId, kind, name] = /^tinker:\/\/([^/]+)\/([^/]+)\/(.+)$/.exec(pointer.samplerPath!)!;
  return (await readModelFolder(path.join(dataDir, modelId!, kind!, name!))).weights;
}

describeSlow('an update through forward and a weighted cross_entropy forward_backward (slow)', () => {
  let local: PolicyBackend;
  beforeAll(async () => {
    local = await localEngine();
  });
  afterAll(() => local.dispose());

  it("moves every weight as the local trainer's update with drmas's loss does (Adam with eps 10: a step ≈ g/10, linear in the gradient)", async () => {
    const view = stepView(0);
    const before = await local.exportWeights();
    const [scoredLocal, scoredTinker] = [await local.score({ batch: view }), await tinker.score({ batch: view })];
    expect(relativeError(scoredTinker.logProbs, scoredLocal.logProbs)).toBeLessThan(1e-5);
    const sgdLike = { lr: 1, eps: 10, weightDecay: 0, maxGradNorm: 0 };
    const expected = await local.update(updateRequest(view, sgdLike));
    const got = await tinker.update(updateRequest(view, sgdLike));
    expect(got.loss).toBeCloseTo(expected.loss, 5);
    expect(got.gradNorm).toBeCloseTo(expected.gradNorm, 3);
    expect(got.metrics.pg_clipfrac).toBeCloseTo(expected.metrics.pg_clipfrac!, 6);
    const after = await local.exportWeights();
    const remote = await serverWeights(tinker);
    let worst = 0;
    for (const [name, start] of before) {
      const moved = after.get(name)!.data.map((v, i) => v - start.data[i]!);
      const movedRemote = remote.get(name)!.data.map((v, i) => v - start.data[i]!);
      expect(moved.reduce((m, v) => Math.max(m, Math.abs(v)), 0)).toBeGreaterThan(1e-6);
      worst = Math.max(worst, relativeError(movedRemote, moved));
    }
    expect(worst).toBeLessThan(2e-3);
  });

  it('save then load restores the weights and optimizer state of the save (later updates undone)', async () => {
    const view = stepView(1);
    const dir = path.join(scratch, 'resume');
    await tinker.save(dir);
    const saved = (await tinker.score({ batch: view })).logProbs;
    await tinker.update(updateRequest(view));
    const moved = (await tinker.score({ batch: view })).logProbs;
    expect(relativeError(moved, saved)).toBeGreaterThan(1e-3);
    await tinker.load(dir);
    expect(relativeError((await tinker.score({ batch: view })).logProbs, saved)).toBeLessThan(1e-6);
  });

  it('samples through the server from the weights of the last update, with the log-probs forward gives them', async () => {
    const result = await tinker.generate({ prompts: [[3, 7, 1], [8]], maxNewTokens: 4, temperature: 1, seed: 5 });
    expect(result.tokenIds.map((t) => t.length)).toEqual([4, 4]);
    const again = await tinker.generate({ prompts: [[3, 7, 1], [8]], maxNewTokens: 4, temperature: 1, seed: 5 });
    expect(again.tokenIds).toEqual(result.tokenIds);
  });
});

describe('futures: try-again, 408 and 410 answers from the server', () => {
  afterAll(() => {
    server.futures.policy = { ...server.futures.policy, delayMs: 0, pending: 'try_again', expire: undefined };
  });

  // The work starts a second after its request, so the client's first poll (sent as soon as the request is answered)
  // finds it running even on a loaded machine; 60 ms was not always enough under a parallel test run.
  it('polls again on try_again until the request finishes', async () => {
    server.futures.policy = { ...server.futures.policy, delayMs: 1000, holdMs: 5, pending: 'try_again' };
    const seen = stats.tryAgain;
    await tinker.score({ batch: stepView(0) });
    expect(stats.tryAgain - seen).toBeGreaterThan(0);
  });

  it('polls again on 408 until the request finishes', async () => {
    server.futures.policy = { ...server.futures.policy, delayMs: 1000, holdMs: 5, pending: '408' };
    const seen = stats.timeouts;
    await tinker.score({ batch: stepView(0) });
    expect(stats.timeouts - seen).toBeGreaterThan(0);
  });

  it('resubmits a forward whose result expired (410) and gets the same log-probs', async () => {
    server.futures.policy = { ...server.futures.policy, delayMs: 0, pending: 'try_again' };
    const expected = (await tinker.score({ batch: stepView(0) })).logProbs;
    server.futures.policy.expire = { afterMs: 0, count: 1, kinds: ['forward'] };
    const [expired, resubmitted] = [stats.expired, stats.resubmitted];
    const got = (await tinker.score({ batch: stepView(0) })).logProbs;
    expect([stats.expired - expired, stats.resubmitted - resubmitted]).toEqual([1, 1]);
    expect(Array.from(got)).toEqual(Array.from(expected));
  });

  it('fails a forward_backward whose result expired, naming the url and the way back (it may have counted its gradient)', async () => {
    server.futures.policy.expire = { afterMs: 0, count: 1, kinds: ['forward_backward'] };
    const error = await tinker.update(updateRequest(stepView(0))).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'SERVICE_FAILED', key: 'models.policy.tinker' });
    expect((error as Error).message).toContain(`${url}/api/v1/forward_backward`);
    expect((error as Error).message).toContain('expired');
    expect((error as { hint: string }).hint).toContain('--resume');
  });

  it('queues a submission sent again with the same X-Idempotency-Key, or the same (model_id, seq_id), once', async () => {
    const submit = async (key: string, seq: number) => {
      const response = await fetch(`${url}/api/v1/forward`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-idempotency-key': key },
        body: JSON.stringify({ model_id: tinker.modelId, seq_id: seq, forward_input: { data: [], loss_fn: 'cross_entropy' } }),
      });
      return ((await response.json()) as { request_id: string }).request_id;
    };
    const first = await submit('key-a', 9001);
    expect(await submit('key-a', 9002)).toBe(first);
    // Another key, the same seq_id: SkyRL main's de-duplication, which the SDK's retries rely on.
    expect(await submit('key-b', 9001)).toBe(first);
    expect(await submit('key-c', 9003)).not.toBe(first);
  });

  it('gives up on a server that does not answer, after the bounded retries, naming its url', async () => {
    const dead = client('http://127.0.0.1:9', { retries: 2, retryDelayMs: 1 });
    const error = await dead.call('forward', () => ({}), { idempotent: true }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'SERVICE_FAILED' });
    expect((error as Error).message).toContain('http://127.0.0.1:9/api/v1/forward');
    expect((error as Error).message).toContain('after 3 tries');
    expect(dead.stats.retries).toBe(2);
  });

  it('a server URL with user info: messages and the checkpoint pointer name it redacted, and a load matches on that form', async () => {
    const behindProxy = await tinkerBackend(client(url.replace('http://', 'http://t:pw-tinker-9@')));
    expect(behindProxy.runtime).toContain(`tinker ${url.replace('http://', 'http://***@')} (`);
    const dir = path.join(scratch, 'user-info');
    await behindProxy.save(dir);
    const pointer = readFileSync(path.join(dir, TINKER_CHECKPOINT_FILE), 'utf8');
    expect((JSON.parse(pointer) as TinkerCheckpointPointer).baseUrl).toBe(url.replace('http://', 'http://***@'));
    expect(pointer).not.toContain('pw-tinker-9');
    await behindProxy.load(dir);
    const dead = client('http://t:pw-tinker-9@127.0.0.1:9', { retries: 0 });
    const error = await dead.call('forward', () => ({}), { idempotent: true }).catch((e: unknown) => e);
    expect((error as Error).message).toContain('http://***@127.0.0.1:9/api/v1/forward');
    expect(`${(error as Error).message}${(error as DrmasError).hint}`).not.toContain('pw-tinker-9');
  });
});

describeSlow('three training steps through the tinker backend equal three steps of the local trainer', () => {
  it('losses, gradient norms and log-probs after each step within tolerance (AdamW, clipping, weight decay)', async () => {
    const local = await localEngine();
    const fresh = await tinkerBackend(client(url));
    try {
      for (let step = 0; step < 3; step++) {
        const view = stepView(step);
        const expected = await local.update(updateRequest(view));
        const got = await fresh.update(updateRequest(view));
        expect(got.loss).toBeCloseTo(expected.loss, 4);
        expect(Math.abs(got.gradNorm - expected.gradNorm) / expected.gradNorm).toBeLessThan(1e-3);
        const probe = stepView(9);
        const [a, b] = [await fresh.score({ batch: probe }), await local.score({ batch: probe })];
        expect(relativeError(a.logProbs, b.logProbs)).toBeLessThan(1e-3);
      }
    } finally {
      local.dispose();
    }
  });
});
