import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { DrmasError } from '@drmas/core';
import { builtinTokenizer } from '@drmas/models';
import { TinkerClient } from '../../plugins/backend-tinker/src/client/TinkerClient.js';
import { detectServer, TINKER_SERVER_TRAITS } from '../../plugins/backend-tinker/src/client/tinkerServers.js';
import { TinkerPolicyBackend } from '../../plugins/backend-tinker/src/TinkerPolicyBackend.js';
import { stepView, updateRequest } from '../../plugins/backend-tinker/test/tinkerFixtures.js';
import { describeInterop } from '../support/interopSuite.js';
import { RecordingProxy } from '../support/recordingProxy.js';
import { REPO_ROOT, TempProject } from '../support/tempProject.js';
import { freePort, ServerProcess } from './support.js';

// SkyRL tx (skyrl[tinker] 0.3.0 on JAX's CPU build, scripts/python/skyrl.txt), the self-hostable Tinker API server,
// serving a small random Llama checkpoint (its JAX models are Llama 3, Qwen3, Qwen3.5 and DeepSeek V3: no Qwen2)
// with the math preset's tokenizer. Its API server starts its engine as `uv run <its own uv flags> -m
// skyrl.tinker.engine` after reading its parent's command line, so it must itself be started by `uv run`: a two-line
// `uv` here runs the module in the environment as `uv run` would from SkyRL's source tree (as a child, not exec'd, so
// the API server's parent is that `uv run` command).

const TOKENIZER = path.join(REPO_ROOT, 'presets/math/checkpoints/base/policy');
const VOCAB = 512;

describeInterop('SkyRL tx on this CPU', 'skyrl', (python) => {
  const project = new TempProject('skyrl-interop');
  let server: ServerProcess;
  let url: string;
  let checkpoint: string;

  beforeAll(async () => {
    checkpoint = project.path('llama');
    const made = spawnSync(python, [path.join(REPO_ROOT, 'test/interop/python/llama_checkpoint.py'), TOKENIZER, checkpoint], {
      encoding: 'utf8',
    });
    if (made.status !== 0) throw new Error(`llama_checkpoint.py: ${made.stderr.slice(-2000)}`);
    const bin = project.path('bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(path.join(bin, 'uv'), '#!/bin/sh\nwhile [ $# -gt 0 ] && [ "$1" != "-m" ]; do shift; done\n"$SKYRL_PYTHON" "$@"\n');
    chmodSync(path.join(bin, 'uv'), 0o755);
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    server = new ServerProcess(
      path.join(bin, 'uv'),
      [
        ...['run', '--offline', '-m', 'skyrl.tinker.api', '--base-model', checkpoint, '--backend', 'jax'],
        ...['--database-url', `sqlite:///${project.path('tinker.db')}`, '--checkpoints-base', project.path('checkpoints')],
        ...['--host', '127.0.0.1', '--port', String(port)],
      ],
      { PATH: `${bin}:${process.env.PATH}`, SKYRL_PYTHON: python, JAX_PLATFORMS: 'cpu' },
      project.dir,
    );
    await server.waitFor(`${url}/api/v1/healthz`, 240_000);
  }, 300_000);
  afterAll(async () => {
    await server?.stop();
    project.dispose();
  });

  function tinkerClient(baseUrl: string): TinkerClient {
    return new TinkerClient({
      baseUrl,
      timeoutMs: 60_000,
      pollTimeoutMs: 330_000,
      heartbeatMs: 1_000,
      retries: 2,
      retryDelayMs: 50,
      futureTimeoutMs: 600_000,
      pollIntervalMs: 50,
      resubmits: 1,
      key: 'models.policy.tinker',
    });
  }

  function backend(client: TinkerClient, loraRank: number): Promise<TinkerPolicyBackend> {
    return TinkerPolicyBackend.create({
      name: 'tinker:policy',
      client,
      server: TINKER_SERVER_TRAITS.skyrl,
      log: () => undefined,
      baseModel: checkpoint,
      loraRank,
      seed: 1,
      tokenizer: builtinTokenizer(VOCAB),
      vocabSize: VOCAB,
      key: 'models.policy.tinker',
    });
  }

  test('is recognised as SkyRL; a LoRA model trains: the norm read from skyrl.ai/grad_norm, the log-probs move, sampling follows', async () => {
    const client = tinkerClient(url);
    expect(await detectServer(client, () => undefined)).toBe('skyrl');
    const lora = await backend(client, 8);
    try {
      const view = stepView(0);
      const before = await lora.score({ batch: view });
      expect(before.logProbs.every((v) => Number.isFinite(v) && v <= 0)).toBe(true);
      const stepped = await lora.update(updateRequest(view, { lr: 1e-2, maxGradNorm: 0, weightDecay: 0 }));
      expect(stepped.gradNorm).toBeGreaterThan(0);
      expect(Number.isFinite(stepped.loss)).toBe(true);
      const after = await lora.score({ batch: view });
      const moved = Math.max(...Array.from(after.logProbs, (v, i) => Math.abs(v - before.logProbs[i]!)));
      expect(moved).toBeGreaterThan(1e-4);
      const sampled = await lora.generate({ prompts: [[3, 7, 1], [8]], maxNewTokens: 4, temperature: 1, seed: 5 });
      sampled.tokenIds.forEach((ids, r) => expect(sampled.logProbs[r]).toHaveLength(ids.length));
      // Heartbeats every second kept the session (SkyRL unloads a session's models 300 s after its last).
      expect(client.stats.heartbeats).toBeGreaterThan(0);
      expect(client.stats.heartbeatFailures).toBe(0);
    } finally {
      lora.dispose();
    }
  }, 600_000);

  test('a forward_backward whose answer is lost on the way back reaches SkyRL once: drmas does not send it again', async () => {
    const proxy = new RecordingProxy(url, (route, index) => route === '/api/v1/forward_backward' && index === 0);
    const lora = await backend(tinkerClient(await proxy.start()), 8);
    try {
      const error = (await lora.update(updateRequest(stepView(1), { maxGradNorm: 0 })).catch((e: unknown) => e)) as DrmasError;
      expect(error.code).toBe('SERVICE_FAILED');
      expect(error.message).toContain('the answer was lost after the request was sent');
      expect(proxy.requests.filter((s) => s.url === '/api/v1/forward_backward')).toHaveLength(1);
      // SkyRL 0.3 queued it (a future was made) and would have queued a second try too: it has no seq_id de-duplication.
      expect(JSON.parse(proxy.requests.find((s) => s.url === '/api/v1/forward_backward')!.answer!)).toHaveProperty('request_id');
    } finally {
      lora.dispose();
      await proxy.stop();
    }
  }, 600_000);

  test('all weights (loraRank 0): its JAX backend trains LoRA only, and the failed create_model (HTTP 400) says so', async () => {
    const error = (await backend(tinkerClient(url), 0).catch((e: unknown) => e)) as DrmasError;
    expect(error.code).toBe('SERVICE_FAILED');
    expect(error.message).toContain('create_model: request');
    expect(error.message).toContain('LoRA rank 0 must be between 1 and 32');
  }, 600_000);

  test('clipping is refused honestly (SkyRL drops grad_clip_norm): maxGradNorm > 0 is a CONFIG_INVALID', async () => {
    const lora = await backend(tinkerClient(url), 8);
    try {
      const error = (await lora.update(updateRequest(stepView(0))).catch((e: unknown) => e)) as DrmasError;
      expect(error.code).toBe('CONFIG_INVALID');
      expect(error.key).toBe('models.policy.optimizer.maxGradNorm');
    } finally {
      lora.dispose();
    }
  }, 600_000);
});
