import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GenerateRequest, PolicyBackend } from '@drmas/core';
import { BackendFactory, scoreSequences } from '@drmas/core';
import { createTfjsPolicyBackend, tfjsBackendFactory, type TfjsPolicyBackend } from '@drmas/plugin-backend-tfjs';
import {
  createOnnxPolicyBackend,
  detectCuda,
  ONNXRUNTIME_INSTALL,
  ONNXRUNTIME_VERSION,
  OnnxPolicyBackend,
  OnnxRuntimeUnavailableError,
  createOnnxBackendFactory,
} from '../src/index.js';
import onnxBackendPlugin from '../src/index.js';
import { maxAbsDiff } from './parityFixtures.js';
import { makeBatch, updateRequest, weightedCrossEntropy } from '../../backend-tfjs/test/trainingFixtures.js';
import { TEST_BUDGET } from './engineRun.js';

const onnxBackendFactory = createOnnxBackendFactory();

const PROMPTS = [[5, 60, 7, 81, 9, 3, 44], [12], [30, 4, 11, 2, 19], [100, 101]];

let onnx: OnnxPolicyBackend;
let tfjs: TfjsPolicyBackend;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'drmas-onnx-'));
  onnx = await createOnnxPolicyBackend({ model: 'tiny', seed: 5, provider: 'cpu' });
  tfjs = await createTfjsPolicyBackend({ model: 'tiny', seed: 5 });
});
afterAll(() => {
  onnx.dispose();
  tfjs.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** Where a row would stop on a stop string, found on the unconstrained output. */
function expectedStop(ids: number[], stop: string, decode: (ids: number[]) => string): number {
  for (let j = 0; j < ids.length; j++) if (decode(ids.slice(0, j + 1)).includes(stop)) return j + 1;
  return -1;
}

describe('built-in models', () => {
  it('have the same weights and tokenizer as the tfjs backend for one seed', async () => {
    const [a, b] = [await onnx.exportWeights(), await tfjs.exportWeights()];
    expect([...a.keys()]).toEqual([...b.keys()]);
    for (const [name, t] of a) expect(Buffer.from(t.data.buffer).equals(Buffer.from(b.get(name)!.data.buffer))).toBe(true);
    expect(onnx.tokenizer!.encode('hello world')).toEqual(tfjs.tokenizer!.encode('hello world'));
    expect(onnx.runtime).toMatch(/^onnxruntime-node 1\.\d+\.\d+ \(CPU, \d+ threads?\)$/);
  });

  it('samples like the tfjs backend (temperature, top-p, top-k, seed), row by row', async () => {
    const request: GenerateRequest = {
      prompts: PROMPTS,
      maxNewTokens: 16,
      temperature: 0.9,
      topP: 0.95,
      topK: 40,
      seed: 11,
      stopTokenIds: [],
    };
    const [a, b] = await Promise.all([tfjs.generate(request), onnx.generate(request)]);
    expect(b.tokenIds).toEqual(a.tokenIds);
    expect(maxAbsDiff(a.logProbs, b.logProbs)).toBeLessThan(1e-4);
    // The log-probs are of the policy at the sampling temperature: scoring the samples at 0.9 gives them back.
    const scored = await scoreSequences(onnx, PROMPTS, b.tokenIds, { temperatures: PROMPTS.map(() => 0.9) });
    expect(maxAbsDiff(scored.logProbs, b.logProbs)).toBeLessThan(1e-4);
  });

  it('stops each row on its own at stop strings and stop ids; the other rows run on', async () => {
    const decode = (ids: number[]) => onnx.tokenizer!.decode(ids);
    const base: GenerateRequest = { prompts: PROMPTS, maxNewTokens: 20, temperature: 1, seed: 3, stopTokenIds: [] };
    const free = await onnx.generate(base);
    expect(free.finishReasons).toEqual(['length', 'length', 'length', 'length']);

    // A stop string that row 1 produces at its 6th token.
    const text = decode(free.tokenIds[1]!.slice(0, 6));
    const stop = text.slice(-2).trim() ? text.slice(-2) : text.slice(-3);
    const stops = free.tokenIds.map((ids) => expectedStop(ids, stop, decode));
    expect(stops[1]).toBeGreaterThan(0);
    expect(stops[1]).toBeLessThanOrEqual(6);
    const withStop: GenerateRequest = { ...base, stopStrings: [stop] };
    const [a, b] = await Promise.all([onnx.generate(withStop), tfjs.generate(withStop)]);
    free.tokenIds.forEach((ids, r) => {
      const at = stops[r]!;
      expect(a.tokenIds[r]).toEqual(at > 0 ? ids.slice(0, at) : ids);
      expect(a.finishReasons[r]).toBe(at > 0 ? 'stop' : 'length');
    });
    expect(a.finishReasons).toContain('length');
    expect(b).toEqual({ ...a, logProbs: b.logProbs });

    // A stop id: row 2's 4th token ends every row at its first occurrence.
    const stopId = free.tokenIds[2]![3]!;
    const byId = await onnx.generate({ ...base, stopTokenIds: [stopId] });
    free.tokenIds.forEach((ids, r) => {
      const at = ids.indexOf(stopId);
      expect(byId.tokenIds[r]).toEqual(at >= 0 ? ids.slice(0, at + 1) : ids);
      expect(byId.finishReasons[r]).toBe(at >= 0 ? 'stop' : 'length');
    });
  });

  it('rowSeeds: a row with its own seed and key 0 samples what a one-row call at that seed samples, on both engines', async () => {
    const request: GenerateRequest = { prompts: PROMPTS.slice(0, 2), maxNewTokens: 6, temperature: 1, rowSeeds: [5, 9], rowKeys: [0, 0] };
    const alone = await Promise.all(
      [5, 9].map((seed, r) => onnx.generate({ prompts: [PROMPTS[r]!], maxNewTokens: 6, temperature: 1, seed })),
    );
    const [a, b] = await Promise.all([onnx.generate(request), tfjs.generate(request)]);
    expect(a.tokenIds).toEqual(alone.map((one) => one.tokenIds[0]));
    expect(b.tokenIds).toEqual(a.tokenIds);
  });

  it("the samples of one prompt share its prefill (run once per distinct prompt) and sample what tfjs's per-row prefill samples", async () => {
    const prompts = [PROMPTS[0]!, PROMPTS[2]!, PROMPTS[0]!, PROMPTS[0]!, PROMPTS[3]!, PROMPTS[2]!];
    const request: GenerateRequest = { prompts, maxNewTokens: 8, temperature: 0.8, topP: 0.9, seed: 21, stopTokenIds: [] };
    const prefill = jest.spyOn(await onnx.session('prefill'), 'run');
    let a;
    let shapes: (readonly number[])[];
    try {
      a = await onnx.generate(request);
      shapes = prefill.mock.calls.map(([feeds]) => feeds.input_ids!.dims);
    } finally {
      prefill.mockRestore();
    }
    // Three distinct prompts, as wide as the longest of all six.
    expect(shapes).toEqual([[3, 7]]);
    const b = await tfjs.generate(request);
    expect(a.tokenIds).toEqual(b.tokenIds);
    expect(maxAbsDiff(a.logProbs, b.logProbs)).toBeLessThan(1e-4);
    // Rows of one prompt draw their own streams.
    expect(new Set([0, 2, 3].map((r) => a.tokenIds[r]!.join())).size).toBeGreaterThan(1);
  });

  it('streams tokens through onToken and stops at the default eos ids', async () => {
    const seen: [number, number, number][] = [];
    const out = await onnx.generate({
      prompts: PROMPTS.slice(0, 2),
      maxNewTokens: 5,
      seed: 1,
      onToken: (r, id, lp) => seen.push([r, id, lp]),
    });
    expect(seen.filter(([r]) => r === 0).map(([, id]) => id)).toEqual(out.tokenIds[0]);
    expect(seen.filter(([r]) => r === 1).map(([, , lp]) => lp)).toEqual(out.logProbs[1]);
    expect(onnx.defaultStopTokenIds).toEqual(tfjs.defaultStopTokenIds);
  });

  it('saves a checkpoint that both engines load to the same scores', async () => {
    await onnx.save(dir);
    const again = await createOnnxPolicyBackend({ model: dir, provider: 'cpu' });
    const other = await createTfjsPolicyBackend({ model: dir });
    const score = (backend: PolicyBackend) =>
      scoreSequences(
        backend,
        PROMPTS,
        PROMPTS.map((p) => p.slice().reverse()),
      );
    const [x, y, z] = await Promise.all([score(onnx), score(again), score(other)]);
    expect(y.logProbs).toEqual(x.logProbs);
    expect(maxAbsDiff(z.logProbs, x.logProbs)).toBeLessThan(1e-4);
    again.dispose();
    other.dispose();
  });
});

describe('execution provider', () => {
  it('falls back to CPU with a clear message when CUDA is asked for but absent', async () => {
    const warnings: string[] = [];
    const backend = await OnnxPolicyBackend.create(onnx.config, await onnx.exportWeights(), undefined, {
      provider: 'cuda',
      warn: (m) => warnings.push(m),
      detectProvider: (provider) =>
        provider === 'cuda' ? Promise.resolve({ available: false, reason: 'the CUDA provider library is not installed' }) : undefined,
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /CUDA was requested but is unavailable: the CUDA provider library is not installed; falling back to the CPU/,
    );
    expect(warnings[0]).toContain('ONNXRUNTIME_NODE_INSTALL=cuda12 npm install onnxruntime-node@1.30.0');
    expect(backend.provider.provider).toBe('cpu');
    expect(backend.runtime).toMatch(/CPU.*fell back/);
    const out = await backend.generate({ prompts: [[1, 2, 3]], maxNewTokens: 3, temperature: 0 });
    expect(out.tokenIds[0]).toHaveLength(3);
    backend.dispose();
  });

  it('detects this machine honestly; auto picks CPU without a warning when CUDA is absent', async () => {
    const cuda = await detectCuda();
    const warnings: string[] = [];
    const auto = await OnnxPolicyBackend.create(onnx.config, await onnx.exportWeights(), undefined, {
      provider: 'auto',
      warn: (m) => warnings.push(m),
    });
    expect(auto.provider.provider).toBe(cuda.available ? 'cuda' : 'cpu');
    expect(warnings).toEqual([]);
    auto.dispose();
    if (!cuda.available) {
      const asked = await OnnxPolicyBackend.create(onnx.config, await onnx.exportWeights(), undefined, {
        provider: 'cuda',
        warn: (m) => warnings.push(m),
      });
      expect(asked.provider.fallbackReason).toContain(cuda.reason);
      expect(warnings[0]).toMatch(/falling back to the CPU/);
      asked.dispose();
    }
  });

  it('rejects an unknown provider naming the choices', async () => {
    await expect(
      OnnxPolicyBackend.create(onnx.config, await onnx.exportWeights(), undefined, { provider: 'rocm' as 'cpu' }),
    ).rejects.toThrow(/unknown onnxruntime execution provider "rocm"/);
  });
});

describe('plugin', () => {
  it("provides the BackendFactory 'onnx', which builds an engine that takes a trainer's weights", async () => {
    const provided: [unknown, string, unknown][] = [];
    const ctx = { provide: (token: unknown, name: string, value: unknown) => provided.push([token, name, value]) };
    onnxBackendPlugin().register(ctx as never);
    onnxBackendPlugin().register(ctx as never);
    expect(provided.map(([token, name]) => [token, name])).toEqual([
      [BackendFactory, 'onnx'],
      [BackendFactory, 'onnx'],
    ]);
    // One factory per kernel: its runs' sessions and LoRA bases go with that kernel's container.
    expect(provided[0]![2]).not.toBe(provided[1]![2]);

    const logs: string[] = [];
    const backend: PolicyBackend = await onnxBackendFactory.create({
      modelId: 'policy',
      settings: { model: 'tiny', seed: 9, provider: 'cpu', runtime: 'auto' },
      run: { log: (m: string) => logs.push(m), memoryBudget: TEST_BUDGET } as never,
    });
    expect(logs[0]).toMatch(/model policy: tiny on onnxruntime-node/);
    await backend.syncWeights(onnx);
    expect((await scoreSequences(backend, PROMPTS, PROMPTS)).logProbs).toEqual((await scoreSequences(onnx, PROMPTS, PROMPTS)).logProbs);
    backend.dispose();
  });

  it('models.<id>.threads sets the intra-op threads, said in the runtime; 0 is refused by the schema', async () => {
    const backend = await onnxBackendFactory.create({
      modelId: 'policy',
      settings: { model: 'tiny', seed: 5, provider: 'cpu', runtime: 'auto', threads: 1 },
      run: { log: () => {}, memoryBudget: TEST_BUDGET } as never,
    });
    expect(backend.runtime).toMatch(/^onnxruntime-node 1\.\d+\.\d+ \(CPU, 1 thread\)$/);
    // One thread samples what the default threads sample: the thread count changes speed only.
    const request: GenerateRequest = { prompts: PROMPTS, maxNewTokens: 6, temperature: 1, seed: 3 };
    expect((await backend.generate(request)).tokenIds).toEqual((await onnx.generate(request)).tokenIds);
    backend.dispose();
    const schema = onnxBackendPlugin().configSchema.models;
    expect(schema.safeParse({ threads: 0 }).success).toBe(false);
    expect(schema.safeParse({ threads: 2 }).success).toBe(true);
  });

  it('models.<id>.memoryPattern changes memory only: both settings sample, train and score alike, in sessions of their own', async () => {
    const run = { log: () => {}, memoryBudget: TEST_BUDGET };
    const make = (memoryPattern: boolean) =>
      onnxBackendFactory.create({
        modelId: `pattern-${memoryPattern}`,
        settings: { model: 'tiny', seed: 5, provider: 'cpu', threads: 1, memoryPattern },
        run: run as never,
      }) as Promise<OnnxPolicyBackend>;
    const [on, off] = [await make(true), await make(false)];
    expect(await on.session('decode')).not.toBe(await off.session('decode'));
    const request: GenerateRequest = { prompts: PROMPTS, maxNewTokens: 8, temperature: 1, seed: 4, stopTokenIds: [] };
    const update = updateRequest(makeBatch([[PROMPTS[1]!, [7, 2, 9]]], [0.5]), weightedCrossEntropy, 1, { optimizer: { lr: 1e-2 } });
    const behaviour = async (engine: PolicyBackend) => ({
      sampled: (await engine.generate(request)).tokenIds,
      gradNorm: (await engine.update(update)).gradNorm,
      scores: (await scoreSequences(engine, PROMPTS, PROMPTS)).logProbs,
    });
    expect(await behaviour(off)).toEqual(await behaviour(on));
    on.dispose();
    off.dispose();
    const schema = onnxBackendPlugin().configSchema.models;
    expect(schema.safeParse({ memoryPattern: 'off' }).success).toBe(false);
    expect(schema.safeParse({ memoryPattern: false }).success).toBe(true);
  });

  it('models.<id>.weightLayout: the shared layout (the Hugging Face tensors in place) samples, trains and scores as the fused one', async () => {
    const run = { log: () => {}, memoryBudget: TEST_BUDGET };
    const make = (weightLayout?: string) =>
      onnxBackendFactory.create({
        modelId: `layout-${weightLayout}`,
        settings: { model: 'tiny', seed: 5, provider: 'cpu', threads: 1, ...(weightLayout && { weightLayout }) },
        run: run as never,
      }) as Promise<OnnxPolicyBackend>;
    const [fused, shared, byDefault] = [await make('fused'), await make('shared'), await make()];
    // tiny's 12.3 MiB of float32 weights are below SHARED_LAYOUT_BYTES: fused by default.
    expect([fused.weightLayout, shared.weightLayout, byDefault.weightLayout]).toEqual(['fused', 'shared', 'fused']);
    const request: GenerateRequest = { prompts: PROMPTS, maxNewTokens: 8, temperature: 0, stopTokenIds: [] };
    const update = updateRequest(makeBatch([[PROMPTS[1]!, [7, 2, 9]]], [0.5]), weightedCrossEntropy, 1, { optimizer: { lr: 1e-2 } });
    const behaviour = async (engine: PolicyBackend) => ({
      sampled: (await engine.generate(request)).tokenIds,
      gradNorm: (await engine.update(update)).gradNorm,
      scores: (await scoreSequences(engine, PROMPTS, PROMPTS)).logProbs,
    });
    const [a, b] = [await behaviour(fused), await behaviour(shared)];
    expect(b.sampled).toEqual(a.sampled);
    expect(Math.abs(b.gradNorm - a.gradNorm)).toBeLessThan(1e-4 * a.gradNorm);
    expect(maxAbsDiff(b.scores, a.scores)).toBeLessThan(1e-4);
    for (const engine of [fused, shared, byDefault]) engine.dispose();
    const schema = onnxBackendPlugin().configSchema.models;
    expect(schema.safeParse({ weightLayout: 'transposed' }).success).toBe(false);
    expect(schema.safeParse({ weightLayout: 'shared' }).success).toBe(true);
    const state = (weightLayout: string) => onnxBackendFactory.trainingStateBytes!({ model: 'tiny', weightLayout })!.bytes;
    // 3,211,264 float32 weights: 4 copies (weights, gradients, two moments) shared, one more fused; and what each
    // run holds: the returned copy of the gradients, three [512, 256] float32 gradients, 300 MiB of Node and onnxruntime.
    const perRun = 12_845_056 + 3 * 512 * 256 * 4 + 300 * 2 ** 20;
    expect([state('shared'), state('fused')]).toEqual([4 * 12_845_056 + perRun, 5 * 12_845_056 + perRun]);
    // With 8-bit moments: two float32 copies shared (weights, gradients), and per moment a byte a weight and a float32
    // absmax for each block of 256: 2 x (3,211,264 + 4 x 12,544).
    const eightBit = onnxBackendFactory.trainingStateBytes!({ model: 'tiny', weightLayout: 'shared', optimizer: { moments: '8bit' } })!;
    expect(eightBit.bytes).toBe(2 * 12_845_056 + 2 * (3_211_264 + 4 * 12_544) + perRun);
    expect(eightBit.reason).toContain("AdamW's two moments in 8 bits 6.22 MiB");
  });

  it("a LoRA agent's engine: made on onnx, refused on tfjs at the agent's lora key", async () => {
    const run = { log: () => {}, memoryBudget: TEST_BUDGET } as never;
    const lora = { rank: 2, alpha: 4, dropout: 0, targetModules: ['q_proj', 'v_proj'], agent: 'solver' };
    const backend = await onnxBackendFactory.create({
      modelId: 'policy',
      settings: { model: 'tiny', seed: 9, provider: 'cpu', lora },
      run,
    });
    const base = await onnxBackendFactory.create({ modelId: 'policy', settings: { model: 'tiny', seed: 9, provider: 'cpu' }, run });
    // B starts at zero: the agent scores as the base model does.
    expect((await scoreSequences(backend, PROMPTS, PROMPTS)).logProbs).toEqual((await scoreSequences(base, PROMPTS, PROMPTS)).logProbs);
    base.dispose();
    expect(backend.parameterNames()).toContain('model.layers.0.self_attn.q_proj.lora_A.weight');
    backend.dispose();
    const tfjs = tfjsBackendFactory.create({ modelId: 'policy', settings: { model: 'tiny', lora }, run });
    await expect(tfjs).rejects.toMatchObject({ code: 'CONFIG_INVALID', key: 'agents.solver.lora' });
  });

  it("a run's engines of one architecture share their sessions; each samples, scores and trains what it does alone", async () => {
    const make = (run: object, seed: number) =>
      onnxBackendFactory.create({ modelId: `m${seed}`, settings: { model: 'tiny', seed, provider: 'cpu', threads: 1 }, run: run as never });
    const quiet = () => ({ log: () => {}, memoryBudget: TEST_BUDGET });
    const run = quiet();
    const shared = [await make(run, 5), await make(run, 9)] as OnnxPolicyBackend[];
    const alone = [await make(quiet(), 5), await make(quiet(), 9)] as OnnxPolicyBackend[];
    const request: GenerateRequest = { prompts: PROMPTS, maxNewTokens: 8, temperature: 1, seed: 4, stopTokenIds: [] };
    const update = updateRequest(
      makeBatch(
        [
          [PROMPTS[0]!, [3, 8, 1]],
          [PROMPTS[2]!, [40, 2]],
        ],
        [1, -0.5],
      ),
      weightedCrossEntropy,
      2,
      {
        optimizer: { lr: 1e-2 },
      },
    );
    const behaviour = async (engine: PolicyBackend) => {
      const sampled = (await engine.generate(request)).tokenIds;
      const { gradNorm } = await engine.update(update);
      return { sampled, gradNorm, scores: (await scoreSequences(engine, PROMPTS, PROMPTS)).logProbs };
    };
    for (const kind of ['prefill', 'decode'] as const) {
      expect(await shared[0]!.session(kind)).toBe(await shared[1]!.session(kind));
      expect(await alone[0]!.session(kind)).not.toBe(await alone[1]!.session(kind));
    }
    const [a, b] = [await behaviour(shared[0]!), await behaviour(shared[1]!)];
    expect(a.sampled).not.toEqual(b.sampled);
    expect(a).toEqual(await behaviour(alone[0]!));
    expect(b).toEqual(await behaviour(alone[1]!));
    // The sessions outlive the first engine to let go.
    shared[0]!.dispose();
    expect(await behaviour(shared[1]!)).toEqual(await behaviour(alone[1]!));
    for (const engine of [shared[1]!, ...alone]) engine.dispose();
  });

  it('a model that fails to load is reported at models.<id>.model, keeping the code and naming the folder', async () => {
    const create = onnxBackendFactory.create({
      modelId: 'policy',
      settings: { model: './no-such-model', provider: 'cpu', runtime: 'auto' },
      run: { log: () => {}, memoryBudget: TEST_BUDGET } as never,
    });
    await expect(create).rejects.toMatchObject({
      code: 'CHECKPOINT_INVALID',
      key: 'models.policy.model',
      message: expect.stringMatching(/^model policy failed to load on onnx: .*no-such-model: checkpoint folder does not exist/),
      hint: expect.stringContaining('Hugging Face checkpoint folder'),
    });
  });
});

describe('onnxruntime-node, an optional dependency', () => {
  const manifest = (path: string) =>
    JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as Record<string, Record<string, string>>;

  it('is ranked above tfjs on a CPU and available here (the repository installs it)', async () => {
    expect(onnxBackendFactory.priority!({ runtime: 'auto' })).toBeGreaterThan(tfjsBackendFactory.priority!({ runtime: 'wasm' }));
    await expect(onnxBackendFactory.probe!()).resolves.toBeUndefined();
  });

  it('the install line the messages give is the version the package declares and the repository tests', () => {
    expect(manifest('../package.json').optionalDependencies!['onnxruntime-node']).toBe(ONNXRUNTIME_VERSION);
    expect(manifest('../../../package.json').devDependencies!['onnxruntime-node']).toBe(ONNXRUNTIME_VERSION);
    expect(ONNXRUNTIME_INSTALL).toBe('ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node@1.30.0');
  });

  it('says "not installed" with the install line when the package is missing, else why it did not load', () => {
    const missing = (message: string) =>
      new OnnxRuntimeUnavailableError(Object.assign(new Error(message), { code: 'ERR_MODULE_NOT_FOUND' }), ONNXRUNTIME_INSTALL).message;
    expect(missing("Cannot find package 'onnxruntime-node' imported from /p/dist/ExecutionProvider.js")).toBe(
      `onnxruntime-node is not installed (${ONNXRUNTIME_INSTALL})`,
    );
    expect(missing("Cannot find module 'onnxruntime-node' from 'dist/ExecutionProvider.js'")).toContain('is not installed');
    expect(missing("Cannot find package 'onnxruntime-common' imported from /p/node_modules/onnxruntime-node/dist/index.js")).toBe(
      "onnxruntime-node did not load: Cannot find package 'onnxruntime-common' imported from /p/node_modules/onnxruntime-node/dist/index.js",
    );
  });
});
