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
  return {
    config: kernel.config,
    container: kernel.container,
    runDir: project.dir,
    signal: new AbortController().signal,
    log: (m) => logs.push(m),
  };
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
