import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { copyFileSync, mkdirSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { BackendFactory, createKernel, DrmasError, type Kernel, type PolicyBackend, type RunContext } from '@drmas/core';
import { readSafetensors, seedForRowKey, writeSafetensors } from '@drmas/models';
import { Gateway } from '@drmas/plugin-gateway';
import { remoteRolloutFactory, sglangDialect, vllmDialect, type RemoteEngine } from '../src/index.js';
import { LoopbackStandIn } from '../../../test/support/loopbackServer.js';
import { runCli } from '../../../test/support/cliRunner.js';
import { REPO_ROOT, TempProject } from '../../../test/support/tempProject.js';

// The math preset's base checkpoint served by an in-process drmas gateway (the vLLM and SGLang dialects), sampled
// through the remote engine and compared with the gateway's own engine called directly.
const CONFIG = 'plugins/rollout-remote/test/fixtures/served.config.json';
const BASE = path.join(REPO_ROOT, 'presets/math/checkpoints/base/policy');

let kernel: Kernel;
let gateway: Gateway;
let local: PolicyBackend;
let project: TempProject;
const logs: string[] = [];

function runContext(): RunContext {
  return kernel.runContext({ runDir: project.dir, log: (m) => logs.push(m) });
}

/** A remote engine of `kind` on `url`, made by the plugin's factory from `models.policy` settings. */
async function remoteEngine(kind: 'vllm' | 'sglang', url: string, extra: Record<string, unknown> = {}): Promise<RemoteEngine> {
  const dialect = kind === 'vllm' ? vllmDialect : sglangDialect;
  const rollout = { kind, url, timeoutMs: 30_000, retries: 0, retryDelayMs: 10, concurrency: 4, ...extra };
  return (await remoteRolloutFactory(dialect).create({
    modelId: 'policy',
    settings: { ...kernel.config.models.policy, rollout },
    run: runContext(),
  })) as RemoteEngine;
}

beforeAll(async () => {
  project = new TempProject('remote-engine');
  ({ kernel } = await createKernel({ cwd: REPO_ROOT, configPath: CONFIG }));
  gateway = await Gateway.open(kernel, { host: '127.0.0.1', port: 0, windowMs: 1, maxBatch: 8, log: () => undefined });
  local = gateway.server.models.find('policy')!.engine;
});
afterAll(async () => {
  await gateway?.close();
  project?.dispose();
});

const PROMPTS = [
  [9, 17, 33, 4, 61],
  [5, 8, 13],
  [100, 7, 250, 3, 77, 12],
];

describe('the remote engine against a drmas gateway over loopback', () => {
  test.each(['vllm', 'sglang'] as const)(
    '%s: token ids and log-probs equal the local engine at the same seed, row by row',
    async (kind) => {
      const remote = await remoteEngine(kind, gateway.url);
      const request = { prompts: PROMPTS, seed: 41, maxNewTokens: 10, temperature: 0.8, topP: 0.95 };
      const want = await local.generate(request);
      const got = await remote.generate(request);
      expect(got.tokenIds).toEqual(want.tokenIds);
      expect(got.finishReasons).toEqual(want.finishReasons);
      got.logProbs.forEach((row, r) => row.forEach((lp, i) => expect(lp).toBeCloseTo(want.logProbs[r]![i]!, 5)));
      expect(remote.stats.rows).toBe(3);
      // Another seed samples something else (the seed reaches the server).
      const other = await remote.generate({ ...request, seed: 42 });
      expect(other.tokenIds).not.toEqual(want.tokenIds);
    },
  );

  test('a weight push loads the trainer’s weights into the server: its log-probs become the trainer’s', async () => {
    // The trainer: the base checkpoint with its final norm scaled (a different model of the same shape).
    const changed = project.path('changed');
    const contents = await readSafetensors(path.join(BASE, 'model.safetensors'));
    const norm = contents.tensors.get('model.norm.weight')!;
    for (let i = 0; i < norm.data.length; i++) norm.data[i] = norm.data[i]! * 1.7 + 0.05;
    mkdirSync(changed, { recursive: true });
    for (const file of ['config.json', 'tokenizer.json', 'tokenizer_config.json'])
      copyFileSync(path.join(BASE, file), path.join(changed, file));
    await writeSafetensors(
      path.join(changed, 'model.safetensors'),
      new Map([...contents.tensors].map(([name, t]) => [name, { shape: t.shape, data: t.data }])),
    );
    const trainer = await kernel
      .getNamed(BackendFactory, 'tfjs')
      .create({ modelId: 'policy', settings: { ...kernel.config.models.policy, model: changed, seed: 0 }, run: runContext() });
    try {
      const remote = await remoteEngine('sglang', gateway.url, { weightsDir: project.path('pushed') });
      const request = { prompts: PROMPTS.slice(0, 2), seed: 3, maxNewTokens: 6, temperature: 1 };
      const before = await remote.generate(request);
      const trained = await trainer.generate(request);
      expect(before.logProbs[0]).not.toEqual(trained.logProbs[0]);
      const reloads = gateway.server.weights.count;
      await remote.syncWeights(trainer);
      expect(gateway.server.weights.count).toBe(reloads + 1);
      expect(gateway.server.weights.version).toBe('policy-v0');
      const after = await remote.generate(request);
      expect(after.tokenIds).toEqual(trained.tokenIds);
      after.logProbs.forEach((row, r) => row.forEach((lp, i) => expect(lp).toBeCloseTo(trained.logProbs[r]![i]!, 4)));
      // vLLM's routes load the base weights back, as version v1.
      const vllm = await remoteEngine('vllm', gateway.url, { weightsDir: project.path('pushed-vllm') });
      const base = await baseEngine();
      try {
        await vllm.syncWeights(base);
      } finally {
        base.dispose();
      }
      expect(gateway.server.weights.count).toBe(reloads + 2);
      const back = await vllm.generate(request);
      expect(back.tokenIds).toEqual(before.tokenIds);
      back.logProbs.forEach((row, r) => row.forEach((lp, i) => expect(lp).toBeCloseTo(before.logProbs[r]![i]!, 4)));
    } finally {
      trainer.dispose();
    }
  });
});

describe("the gateway's prefix cache: stale after a reload until reset, as vLLM's", () => {
  // 20 and 33 tokens: one and two full 16-token blocks, which a prefix cache keeps.
  const LONG = [Array.from({ length: 20 }, (_, i) => 5 + i), Array.from({ length: 33 }, (_, i) => 40 + 3 * i)];

  test('a prompt cached before a reload is refused until /reset_prefix_cache; the remote engine resets after each push', async () => {
    const remote = await remoteEngine('vllm', gateway.url, { weightsDir: project.path('prefix-pushes') });
    const request = { prompts: LONG, seed: 5, maxNewTokens: 4, temperature: 1 };
    const before = await remote.generate(request);
    const cache = gateway.server.weights.prefixCache;
    // A reload without the reset (what drmas did before): the cached prompts are now on stale KV.
    const reloaded = await fetch(`${gateway.url}/collective_rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ method: 'reload_weights', kwargs: { weights_path: BASE } }),
    });
    expect(reloaded.status).toBe(200);
    const refusals = cache.stats.staleRefusals;
    const stale = (await remote.generate(request).catch((e: unknown) => e)) as DrmasError;
    expect(stale.message).toContain('HTTP 409');
    expect(stale.message).toContain('/reset_prefix_cache');
    expect(cache.stats.staleRefusals).toBeGreaterThan(refusals);
    // A push through the remote engine resets the cache: the same prompts sample again, as before (same weights).
    const resets = cache.stats.resets;
    const base = await baseEngine();
    try {
      await remote.syncWeights(base);
    } finally {
      base.dispose();
    }
    expect(cache.stats.resets).toBe(resets + 1);
    expect((await remote.generate(request)).tokenIds).toEqual(before.tokenIds);
  });
});

/** A fresh engine on the base checkpoint, the weights the gateway started with. */
async function baseEngine(): Promise<PolicyBackend> {
  return kernel
    .getNamed(BackendFactory, 'tfjs')
    .create({ modelId: 'policy', settings: { ...kernel.config.models.policy, seed: 0 }, run: runContext() });
}

/** A vLLM stand-in: answers each `/v1/completions` with `script`'s next status, recording the bodies it got. */
class ScriptedVllm extends LoopbackStandIn {
  readonly bodies: Array<Record<string, unknown>> = [];
  constructor(private readonly script: Array<number | 'hang'>) {
    super();
  }
  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let text = '';
    for await (const chunk of req) text += String(chunk);
    const body = JSON.parse(text) as Record<string, unknown>;
    this.bodies.push(body);
    const step = this.script.shift() ?? 200;
    if (step === 'hang') return; // never answers
    if (step !== 200) {
      res.writeHead(step, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `scripted ${step}` } }));
      return;
    }
    const prompt = body.prompt as number[];
    const answer = { choices: [{ token_ids: [prompt[0]!, 2], logprobs: { token_logprobs: [-0.5, -1.25] }, finish_reason: 'length' }] };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  }
}

describe('requests, retries and time-outs (a scripted server over loopback)', () => {
  test('each row is one vLLM completion: ids as the prompt, its own seed, stops kept, ids and log-probs read back', async () => {
    const server = new ScriptedVllm([]);
    const url = await server.start();
    try {
      const remote = await remoteEngine('vllm', url, { servedModel: 'qwen' });
      const result = await remote.generate({
        prompts: [[7, 8], [9]],
        seed: 12,
        maxNewTokens: 2,
        temperature: 0.5,
        topK: 5,
        stopStrings: ['\n\n'],
      });
      expect(result).toEqual({
        tokenIds: [
          [7, 2],
          [9, 2],
        ],
        logProbs: [
          [-0.5, -1.25],
          [-0.5, -1.25],
        ],
        finishReasons: ['length', 'length'],
      });
      const byPrompt = new Map(server.bodies.map((b) => [JSON.stringify(b.prompt), b]));
      expect(byPrompt.get('[9]')).toEqual({
        model: 'qwen',
        prompt: [9],
        max_tokens: 2,
        temperature: 0.5,
        top_p: 1,
        top_k: 5,
        // Row 1 of a call seeded 12: the seed whose one-row stream is that row's (12 + 1 * 104729 / 7919 mod 2^32).
        seed: seedForRowKey(12, 1),
        stop: ['\n\n'],
        include_stop_str_in_output: true,
        logprobs: 0,
        return_token_ids: true,
      });
      expect(byPrompt.get('[7,8]')!.seed).toBe(12);
    } finally {
      await server.stop();
    }
  });

  test('5xx and 429 are retried up to `retries` times, counted; a 400 is not', async () => {
    const server = new ScriptedVllm([503, 429, 200]);
    const url = await server.start();
    try {
      const remote = await remoteEngine('vllm', url, { servedModel: 'm', retries: 2 });
      await remote.generate({ prompts: [[1]], seed: 0, maxNewTokens: 2 });
      expect(server.bodies).toHaveLength(3);
      const refused = new ScriptedVllm([500, 500, 500]);
      const refusedUrl = await refused.start();
      const failing = await remoteEngine('vllm', refusedUrl, { servedModel: 'm', retries: 2 });
      const error = await failing.generate({ prompts: [[1]], seed: 0, maxNewTokens: 2 }).catch((e: unknown) => e);
      expect(DrmasError.is(error) && error.code).toBe('SERVICE_FAILED');
      expect((error as DrmasError).message).toBe(`POST ${refusedUrl}/v1/completions failed: HTTP 500: scripted 500 (after 3 tries)`);
      expect((error as DrmasError).key).toBe('models.policy.rollout');
      expect(refused.bodies).toHaveLength(3);
      await refused.stop();
      const bad = new ScriptedVllm([400]);
      const badUrl = await bad.start();
      const error400 = await (
        await remoteEngine('vllm', badUrl, { servedModel: 'm', retries: 5 })
      )
        .generate({ prompts: [[1]], seed: 0, maxNewTokens: 2 })
        .catch((e: unknown) => e as DrmasError);
      expect((error400 as DrmasError).message).toContain('HTTP 400: scripted 400');
      expect(bad.bodies).toHaveLength(1);
      await bad.stop();
    } finally {
      await server.stop();
    }
  });

  test('a refused connection is retried until the server comes up', async () => {
    // A free port, closed again: nothing listens until the server starts there 150 ms later.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    const remote = await remoteEngine('vllm', `http://127.0.0.1:${port}`, { servedModel: 'm', retries: 6, retryDelayMs: 40 });
    let late: Server | undefined;
    const timer = setTimeout(() => {
      late = createServer((req, res) => {
        req
          .resume()
          .on('end', () =>
            res.end(JSON.stringify({ choices: [{ token_ids: [4], logprobs: { token_logprobs: [-2] }, finish_reason: 'stop' }] })),
          );
      }).listen(port, '127.0.0.1');
    }, 150);
    try {
      const client = (remote as unknown as { options: { client: { stats: { retries: number } } } }).options.client;
      const result = await remote.generate({ prompts: [[1]], seed: 0, maxNewTokens: 1 });
      expect(result.tokenIds).toEqual([[4]]);
      // Waits of 40, 80, 160 ms... : at least one retry, fewer than the six allowed.
      expect(client.stats.retries).toBeGreaterThanOrEqual(1);
      expect(client.stats.retries).toBeLessThan(6);
    } finally {
      clearTimeout(timer);
      await new Promise<void>((resolve) => (late ? late.close(() => resolve()) : resolve()));
    }
    const down = await remoteEngine('vllm', `http://127.0.0.1:${port}`, { servedModel: 'm', retries: 1, retryDelayMs: 5 });
    await expect(down.generate({ prompts: [[1]], seed: 0, maxNewTokens: 1 })).rejects.toThrow(
      `POST http://127.0.0.1:${port}/v1/completions failed: cannot connect (ECONNREFUSED) (after 2 tries)`,
    );
  });

  test('a request unanswered within timeoutMs fails once, not retried', async () => {
    const server = new ScriptedVllm(['hang', 'hang']);
    const url = await server.start();
    try {
      const remote = await remoteEngine('vllm', url, { servedModel: 'm', timeoutMs: 200, retries: 3 });
      const started = performance.now();
      await expect(remote.generate({ prompts: [[1]], seed: 0, maxNewTokens: 1 })).rejects.toThrow(
        `POST ${url}/v1/completions failed: no answer within 200 ms`,
      );
      expect(performance.now() - started).toBeGreaterThanOrEqual(190);
      expect(server.bodies).toHaveLength(1);
    } finally {
      await server.stop();
    }
  });
});

interface Call {
  method: string;
  route: string;
  body: Record<string, unknown> | undefined;
  authorization: string | undefined;
}
type Answer = { status: number; body?: unknown } | 'hang';

/** A server answering each call with `answer(call)` (200 `{}` when it answers undefined), recording every call. */
class ScriptedServer extends LoopbackStandIn {
  readonly calls: Call[] = [];
  constructor(private readonly answer: (call: Call, index: number) => Answer | undefined) {
    super();
  }
  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let text = '';
    for await (const chunk of req) text += String(chunk);
    const call: Call = {
      method: req.method!,
      route: req.url!,
      body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
      authorization: req.headers.authorization,
    };
    this.calls.push(call);
    const answer = this.answer(call, this.calls.length - 1) ?? { status: 200, body: {} };
    if (answer === 'hang') return;
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body ?? {}));
  }
  routes(): string[] {
    return this.calls.map((c) => `${c.method} ${c.route}`);
  }
}

/** A checkpoint folder for a scripted server to "load" (it reads nothing): `config.json` only. */
function pushedFolder(name: string): string {
  project.write({ [`${name}/config.json`]: {} });
  return project.path(name);
}

describe('weight pushes against the servers as they are today (scripted over loopback)', () => {
  test('vLLM: reload, then reset the prefix cache (tried again while it answers false), then the version, read back', async () => {
    let resets = 0;
    let version: string | null = null;
    const server = new ScriptedServer((call) => {
      if (call.route === '/reset_prefix_cache') return { status: 200, body: { success: ++resets >= 3 } };
      if (call.route === '/update_weight_version') version = call.body!.new_version as string;
      if (call.route === '/weight_info') return { status: 200, body: { weight_version: version } };
      return undefined;
    });
    const url = await server.start();
    try {
      const remote = await remoteEngine('vllm', url, { servedModel: 'm', weightsDir: project.path('vllm-push') });
      await remote.load(pushedFolder('vllm-push'));
      expect(server.routes()).toEqual([
        'GET /weight_info', // the probe, once, before the first push
        'POST /collective_rpc',
        'POST /reset_prefix_cache',
        'POST /reset_prefix_cache',
        'POST /reset_prefix_cache',
        'POST /update_weight_version',
        'GET /weight_info',
      ]);
      expect(server.calls[1]!.body).toEqual({
        method: 'reload_weights',
        kwargs: { weights_path: project.path('vllm-push'), is_checkpoint_format: true },
      });
      expect(remote.weightVersion).toBe('policy-v0');
    } finally {
      await server.stop();
    }
  });

  test('vLLM: a 500 from reload_weights (an older worker without weights_path) fails at once, not retried', async () => {
    const server = new ScriptedServer((call) =>
      call.route === '/collective_rpc'
        ? { status: 500, body: { error: { message: "reload_weights() got an unexpected keyword argument 'weights_path'" } } }
        : { status: 200, body: { weight_version: null } },
    );
    const url = await server.start();
    try {
      const remote = await remoteEngine('vllm', url, { servedModel: 'm', retries: 3, weightsDir: project.path('vllm-old') });
      const error = (await remote.load(pushedFolder('vllm-old')).catch((e: unknown) => e)) as DrmasError;
      expect(error.code).toBe('SERVICE_FAILED');
      expect(error.message).toContain("HTTP 500: reload_weights() got an unexpected keyword argument 'weights_path'");
      expect(error.hint).toContain('reload_weights takes no weights_path');
      expect(server.routes().filter((r) => r === 'POST /collective_rpc')).toHaveLength(1);
    } finally {
      await server.stop();
    }
  });

  test('vLLM without the dev-mode routes: the first push stops, naming VLLM_SERVER_DEV_MODE=1 and the version it met', async () => {
    const server = new ScriptedServer((call) =>
      call.route === '/version' ? { status: 200, body: { version: '0.11.0' } } : { status: 404, body: { detail: 'Not Found' } },
    );
    const url = await server.start();
    try {
      const remote = await remoteEngine('vllm', url, { servedModel: 'm', weightsDir: project.path('vllm-nodev') });
      const error = (await remote.load(pushedFolder('vllm-nodev')).catch((e: unknown) => e)) as DrmasError;
      expect(error.message).toBe(`${url}/weight_info is not served (HTTP 404)`);
      expect(error.hint).toContain('this is vLLM 0.11.0');
      expect(error.hint).toContain('VLLM_SERVER_DEV_MODE=1');
      expect(server.routes()).toEqual(['GET /weight_info', 'GET /version']);
    } finally {
      await server.stop();
    }
  });

  test('SGLang: the version is read at /model_info on current servers, at /get_weight_version on older ones', async () => {
    for (const current of [true, false]) {
      let version = 'default';
      const server = new ScriptedServer((call) => {
        if (call.route === '/update_weights_from_disk') {
          version = call.body!.weight_version as string;
          return { status: 200, body: { success: true, message: 'ok', num_paused_requests: 0 } };
        }
        if (call.route === '/model_info') return current ? { status: 200, body: { weight_version: version } } : { status: 404 };
        // Current: both older routes 404; a 2025 release: /get_weight_version only.
        if (call.route === '/get_weight_version' && !current) return { status: 200, body: { weight_version: version } };
        if (call.route === '/get_weight_version' || call.route === '/weight_version')
          return { status: 404, body: { detail: "Endpoint '/get_weight_version' or '/weight_version' is deprecated." } };
        return undefined;
      });
      const url = await server.start();
      try {
        const remote = await remoteEngine('sglang', url, { weightsDir: project.path(`sglang-${current}`) });
        await remote.load(pushedFolder(`sglang-${current}`));
        expect(remote.weightVersion).toBe('policy-v0');
        expect(server.routes().at(-1)).toBe(current ? 'GET /model_info' : 'GET /get_weight_version');
      } finally {
        await server.stop();
      }
    }
  });

  test.each(['vllm', 'sglang'] as const)('%s: an "abort" finish reason is a failure, not a stop', async (kind) => {
    const server = new ScriptedServer(() =>
      kind === 'vllm'
        ? { status: 200, body: { choices: [{ token_ids: [5], logprobs: { token_logprobs: [-1] }, finish_reason: 'abort' }] } }
        : {
            status: 200,
            body: {
              output_ids: [5],
              meta_info: { output_token_logprobs: [[-1, 5, null]], finish_reason: { type: 'abort', message: 'Abort before prefill' } },
            },
          },
    );
    const url = await server.start();
    try {
      const remote = await remoteEngine(kind, url, { servedModel: 'm' });
      const error = (await remote.generate({ prompts: [[1]], seed: 0, maxNewTokens: 2 }).catch((e: unknown) => e)) as DrmasError;
      expect(error.code).toBe('SERVICE_FAILED');
      expect(error.message).toContain('aborted the request (finish reason "abort")');
      if (kind === 'sglang') expect(error.message).toContain('Abort before prefill');
    } finally {
      await server.stop();
    }
  });

  test('an API key: sent as Authorization: Bearer from the variable apiKeyEnv names; an unset variable is refused', async () => {
    const server = new ScriptedServer((call) =>
      call.authorization === 'Bearer sk-test-123'
        ? { status: 200, body: { choices: [{ token_ids: [5], logprobs: { token_logprobs: [-1] }, finish_reason: 'stop' }] } }
        : { status: 401, body: { error: 'Unauthorized' } },
    );
    const url = await server.start();
    process.env.DRMAS_TEST_VLLM_KEY = 'sk-test-123';
    try {
      const keyed = await remoteEngine('vllm', url, { servedModel: 'm', apiKeyEnv: 'DRMAS_TEST_VLLM_KEY' });
      expect((await keyed.generate({ prompts: [[1]], seed: 0, maxNewTokens: 1 })).tokenIds).toEqual([[5]]);
      const unkeyed = await remoteEngine('vllm', url, { servedModel: 'm', retries: 3 });
      const refused = (await unkeyed.generate({ prompts: [[1]], seed: 0, maxNewTokens: 1 }).catch((e: unknown) => e)) as DrmasError;
      expect(refused.message).toContain('HTTP 401');
      expect(refused.hint).toContain('apiKeyEnv');
      expect(server.calls).toHaveLength(2); // the 401 is not retried
      delete process.env.DRMAS_TEST_VLLM_KEY;
      const unset = (await remoteEngine('vllm', url, { servedModel: 'm', apiKeyEnv: 'DRMAS_TEST_VLLM_KEY' }).catch(
        (e: unknown) => e,
      )) as DrmasError;
      expect(unset.code).toBe('CONFIG_INVALID');
      expect(unset.key).toBe('models.policy.rollout.apiKeyEnv');
      expect(unset.message).toContain('DRMAS_TEST_VLLM_KEY');
      expect(unset.message).not.toContain('sk-test-123');
    } finally {
      delete process.env.DRMAS_TEST_VLLM_KEY;
      await server.stop();
    }
  });
});

describe('the config', () => {
  test('drmas info says where the model samples; a server rollout without the plugin names the key and the plugin', async () => {
    const rollout = { kind: 'vllm', url: 'http://127.0.0.1:1' };
    project.write({
      'remote.json': { presets: ['math'], plugins: ['rollout-remote'], models: { policy: { rollout } } },
      'missing.json': { presets: ['math'], models: { policy: { rollout } } },
    });
    const info = await runCli(['info', '--config', project.path('remote.json')]);
    expect(info.stdout).toContain('rollout: vllm at http://127.0.0.1:1;');
    const missing = await runCli(['train', '--config', project.path('missing.json')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('error UNKNOWN_NAME');
    expect(missing.stderr).toContain('models.policy.rollout.kind): no rollout engine "vllm" is registered for a server');
    expect(missing.stderr).toContain('add "rollout-remote" to plugins');
  });
});
