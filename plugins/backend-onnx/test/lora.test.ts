import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { scoreSequences, type LoraSettings, type LoraTargetModule, type PolicyBackend, type WeightTensor } from '@drmas/core';
import {
  initLoraAdapter,
  loadLoraAdapter,
  loraAdapterFiles,
  loraScaling,
  loraTensorNames,
  promptResponseLayout,
  rotaryInverseFrequencies,
  SeededRandom,
  type DecoderConfig,
} from '@drmas/models';
import { buildDecoderGraph, GraphNames, writeLoraProduct } from '../src/DecoderGraph.js';
import { ortTensor, scoreFeeds, type Feeds } from '../src/DecoderFeeds.js';
import { loadOnnxRuntime, type Ort } from '../src/ExecutionProvider.js';
import { graphWeights } from '../src/GraphWeights.js';
import { DifferentiableGraph } from '../src/training/DifferentiableGraph.js';
import { OnnxTrainer } from '../src/training/OnnxTrainer.js';
import { OnnxPolicyBackend } from '../src/OnnxPolicyBackend.js';
import { makeBatch, randomWeights, tinyConfigJson, updateRequest, weightedLogLikelihood } from './parityFixtures.js';

/**
 * LoRA on the onnx graphs and trainer: an adapted forward equals the forward of the merged weights W + (alpha/r) B A
 * (computed here in float64), the adapter product's gradient equals central finite differences of a float64
 * reference, an update changes only the adapter (base bitwise equal, optimizer state for adapter tensors only), and
 * a resume from the PEFT files plus the optimizer state repeats the uninterrupted run bit for bit.
 */

const SETTINGS: LoraSettings = { rank: 3, alpha: 6, dropout: 0, targetModules: ['q_proj', 'v_proj', 'o_proj', 'up_proj', 'down_proj'] };
const MODULE_WEIGHT: Record<LoraTargetModule, string> = {
  q_proj: 'self_attn.q_proj',
  k_proj: 'self_attn.k_proj',
  v_proj: 'self_attn.v_proj',
  o_proj: 'self_attn.o_proj',
  gate_proj: 'mlp.gate_proj',
  up_proj: 'mlp.up_proj',
  down_proj: 'mlp.down_proj',
};
const PAIRS: [number[], number[]][] = [
  [
    [5, 40, 7],
    [31, 9, 3, 44],
  ],
  [[12], [30, 4, 11]],
];
const THREADS = { intraOpNumThreads: 1 };

/** A Qwen2 model (q/k/v bias) and an adapter whose B is random too (PEFT's zero B would hide A from the forward). */
function fixture(): { config: DecoderConfig; hf: Map<string, WeightTensor>; adapter: Map<string, WeightTensor> } {
  const { config, weights } = randomWeights(tinyConfigJson('Qwen2ForCausalLM'), 5);
  const rng = new SeededRandom(11);
  const adapter = initLoraAdapter(config, SETTINGS, rng);
  for (const [name, t] of adapter)
    if (name.endsWith('lora_B.weight')) for (let i = 0; i < t.data.length; i++) t.data[i] = rng.normal() * 0.2;
  return { config, hf: weights, adapter };
}

const clone = (m: Map<string, WeightTensor>) => new Map([...m].map(([n, t]) => [n, { shape: [...t.shape], data: t.data.slice() }]));

/** W + scaling * B A for every targeted module, in float64, rounded once to float32. */
function merged(config: DecoderConfig, hf: Map<string, WeightTensor>, adapter: Map<string, WeightTensor>): Map<string, WeightTensor> {
  const out = clone(hf);
  const s = loraScaling(SETTINGS);
  for (let layer = 0; layer < config.numLayers; layer++) {
    for (const module of SETTINGS.targetModules) {
      const w = out.get(`model.layers.${layer}.${MODULE_WEIGHT[module]}.weight`)!;
      const names = loraTensorNames(layer, module);
      const a = adapter.get(names.a)!;
      const b = adapter.get(names.b)!;
      const [rows, cols] = w.shape as [number, number];
      const r = SETTINGS.rank;
      for (let i = 0; i < rows; i++) {
        for (let j = 0; j < cols; j++) {
          let sum = 0;
          for (let k = 0; k < r; k++) sum += b.data[i * r + k]! * a.data[k * cols + j]!;
          w.data[i * cols + j] = w.data[i * cols + j]! + s * sum;
        }
      }
    }
  }
  return out;
}

describe('LoRA on the onnx graphs', () => {
  let ort: Ort;
  let dir: string;
  beforeAll(async () => {
    ort = await loadOnnxRuntime();
    dir = await mkdtemp(join(tmpdir(), 'drmas-lora-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const score = async (config: DecoderConfig, hf: Map<string, WeightTensor>, adapter?: Map<string, WeightTensor>) => {
    const gw = graphWeights(config, hf);
    const session = await ort.InferenceSession.create(buildDecoderGraph(config, 'score', gw, 'inputs', adapter && SETTINGS), THREADS);
    const layout = promptResponseLayout(
      PAIRS.map(([p]) => p),
      PAIRS.map(([, r]) => r),
    );
    const feeds: Feeds = scoreFeeds(ort, config, rotaryInverseFrequencies(config), layout, [1, 0.8]);
    for (const [name, t] of [...gw, ...(adapter ?? [])]) feeds[name] = ortTensor(ort, t.data, t.shape);
    const out = await session.run(feeds);
    return Array.from(out[GraphNames.logProbs]!.data as Float32Array);
  };

  it('an adapted forward equals the forward of the merged weights W + (alpha/r) B A within 1e-5', async () => {
    const { config, hf, adapter } = fixture();
    const adapted = await score(config, hf, adapter);
    const reference = await score(config, merged(config, hf, adapter));
    const base = await score(config, hf);
    let maxDiff = 0;
    let baseDiff = 0;
    adapted.forEach((x, i) => {
      maxDiff = Math.max(maxDiff, Math.abs(x - reference[i]!));
      baseDiff = Math.max(baseDiff, Math.abs(x - base[i]!));
    });
    expect(maxDiff).toBeLessThan(1e-5);
    // The adapter does move the outputs (so the equality above is not the base's with itself).
    expect(baseDiff).toBeGreaterThan(1e-3);
  });

  it("the adapter product's gradients, through a dropout mask, equal central finite differences of a float64 reference", async () => {
    // loss = sum(C * (x W^T + s ((x * M) A^T) B^T)) for x [4, 5], W [6, 5], A [2, 5], B [6, 2], a dropout mask M [4, 5].
    const rng = new SeededRandom(3);
    const random = (n: number) => Float64Array.from({ length: n }, () => rng.normal());
    const [n, inDim, outDim, r, s] = [4, 5, 6, 2, 1.75];
    const x = random(n * inDim);
    const w = random(outDim * inDim);
    const c = random(n * outDim);
    const a0 = random(r * inDim);
    const b0 = random(outDim * r);
    const m = Float64Array.from({ length: n * inDim }, () => (rng.uniform() < 0.3 ? 0 : 1 / 0.7));
    const g = new DifferentiableGraph('lora-product');
    const [xv, wv, av, bv, cv] = [
      g.input('x', 'float', [n, inDim]),
      g.input('w', 'float', [outDim, inDim]),
      g.input('a', 'float', [r, inDim]),
      g.input('b', 'float', [outDim, r]),
      g.input('c', 'float', [n, outDim]),
    ];
    const mv = g.input('m', 'float', [n, inDim]);
    const y = g.op('Add', [g.op('MatMul', [xv, g.op('Transpose', [wv], { perm: [1, 0] })]), writeLoraProduct(g, xv, av, bv, s, mv)]);
    const loss = g.op('ReduceSum', [g.op('Mul', [y, cv])], { keepdims: 0 });
    const [da, db] = g.gradients(loss, [av, bv]);
    g.output(da!, 'da', 'float', [r, inDim]);
    g.output(db!, 'db', 'float', [outDim, r]);
    const session = await ort.InferenceSession.create(g.builder.toModelProto(), THREADS);
    const f32 = (data: Float64Array, dims: number[]) => ortTensor(ort, Float32Array.from(data), dims);
    const out = await session.run({
      x: f32(x, [n, inDim]),
      w: f32(w, [outDim, inDim]),
      a: f32(a0, [r, inDim]),
      b: f32(b0, [outDim, r]),
      c: f32(c, [n, outDim]),
      m: f32(m, [n, inDim]),
    });
    // The float64 reference, on the float32-rounded inputs the graph saw.
    const round = (v: Float64Array) => v.map(Math.fround);
    const [X, W, C, M] = [round(x), round(w), round(c), round(m)];
    const reference = (A: Float64Array, B: Float64Array): number => {
      let total = 0;
      for (let i = 0; i < n; i++) {
        const xa = Array.from({ length: r }, (_, k) => {
          let sum = 0;
          for (let j = 0; j < inDim; j++) sum += X[i * inDim + j]! * M[i * inDim + j]! * A[k * inDim + j]!;
          return sum;
        });
        for (let o = 0; o < outDim; o++) {
          let v = 0;
          for (let j = 0; j < inDim; j++) v += X[i * inDim + j]! * W[o * inDim + j]!;
          for (let k = 0; k < r; k++) v += s * xa[k]! * B[o * r + k]!;
          total += C[i * outDim + o]! * v;
        }
      }
      return total;
    };
    const finiteDifferences = (A: Float64Array, B: Float64Array, which: 'a' | 'b'): Float64Array => {
      const target = which === 'a' ? A : B;
      const h = 1e-6;
      return target.map((_, i) => {
        const plus = target.slice();
        const minus = target.slice();
        plus[i]! += h;
        minus[i]! -= h;
        const [up, down] = which === 'a' ? [reference(plus, B), reference(minus, B)] : [reference(A, plus), reference(A, minus)];
        return (up - down) / (2 * h);
      });
    };
    const [A, B] = [round(a0), round(b0)];
    for (const [which, name] of [
      ['a', 'da'],
      ['b', 'db'],
    ] as const) {
      const expected = finiteDifferences(A, B, which);
      const got = out[name]!.data as Float32Array;
      const scale = Math.max(...expected.map(Math.abs));
      expected.forEach((e, i) => expect(Math.abs(got[i]! - e)).toBeLessThan(1e-5 * scale));
    }
  });

  it('an update changes only the adapter: base tensors bitwise equal, AdamW state for adapter tensors only', async () => {
    const { config, hf, adapter } = fixture();
    const before = clone(hf);
    const trainer = await OnnxTrainer.create(config, hf, THREADS, { lora: { settings: SETTINGS, adapter } });
    const result = await trainer.update(updateRequest(makeBatch(PAIRS, [1, -0.5]), weightedLogLikelihood, 1, { optimizer: { lr: 1e-2 } }));
    expect(result.skipped).toBe(false);
    for (const [name, t] of hf) expect(Buffer.from(t.data.buffer).equals(Buffer.from(before.get(name)!.data.buffer))).toBe(true);
    // Every adapter tensor moved (the trainer trains copies: the caller's adapter is untouched).
    for (const [name, t] of trainer.weights) {
      const original = adapter.get(name)!.data;
      expect(t.data.some((v, i) => v !== original[i])).toBe(true);
    }
    expect([...trainer.optimizer.snapshot().moments.keys()].sort()).toEqual([...adapter.keys()].sort());
    await trainer.release();
  });

  it('lora.dropout: masks drawn per update from the seed (two trainers agree bit for bit), base untouched, a different step than without', async () => {
    const { config, hf, adapter } = fixture();
    const before = clone(hf);
    const request = updateRequest(makeBatch(PAIRS, [1, -0.5]), weightedLogLikelihood, 1, { optimizer: { lr: 1e-2 } });
    const trained = async (dropout: number, seed: number) => {
      const trainer = await OnnxTrainer.create(config, hf, THREADS, { lora: { settings: { ...SETTINGS, dropout }, adapter, seed } });
      await trainer.update(request);
      await trainer.release();
      return [...trainer.weights.values()].flatMap((t) => Array.from(t.data));
    };
    const [first, again, otherSeed, none] = [await trained(0.3, 4), await trained(0.3, 4), await trained(0.3, 5), await trained(0, 4)];
    expect(again).toEqual(first);
    expect(otherSeed).not.toEqual(first);
    expect(none).not.toEqual(first);
    for (const [name, t] of hf) expect(Buffer.from(t.data.buffer).equals(Buffer.from(before.get(name)!.data.buffer))).toBe(true);
  });

  it('resuming from the PEFT files and the optimizer state repeats the uninterrupted run bit for bit, dropout masks included', async () => {
    const { config, hf, adapter } = fixture();
    const settings = { ...SETTINGS, dropout: 0.2 };
    const requests = [
      updateRequest(makeBatch(PAIRS, [1, -0.5]), weightedLogLikelihood, 1, { optimizer: { lr: 1e-2 } }),
      updateRequest(makeBatch(PAIRS, [-0.7, 1]), weightedLogLikelihood, 2, { optimizer: { lr: 1e-2 } }),
    ];
    const uninterrupted = await OnnxTrainer.create(config, hf, THREADS, { lora: { settings, adapter, seed: 7 } });
    for (const request of requests) await uninterrupted.update(request);

    const first = await OnnxTrainer.create(config, hf, THREADS, { lora: { settings, adapter, seed: 7 } });
    await first.update(requests[0]!);
    const files = {
      ...loraAdapterFiles('adapter', settings, first.weights),
      ...first.optimizer.serialize(first.weights, first.settings),
    };
    for (const [name, data] of Object.entries(files)) {
      await mkdir(dirname(join(dir, name)), { recursive: true });
      await writeFile(join(dir, name), data);
    }
    const loaded = await loadLoraAdapter(join(dir, 'adapter'), config);
    expect(loaded.settings).toEqual(settings);
    const resumed = await OnnxTrainer.create(config, hf, THREADS, {
      lora: { settings: loaded.settings, adapter: loaded.tensors, seed: 7 },
    });
    await resumed.optimizer.load(dir, resumed.weights);
    await resumed.update(requests[1]!);
    for (const [name, t] of uninterrupted.weights) expect(Array.from(resumed.weights.get(name)!.data)).toEqual(Array.from(t.data));
    for (const t of [uninterrupted, first, resumed]) await t.release();
  });

  it("agents' engines on one base: an update changes only its own agent's adapter; save and load restore it", async () => {
    const { config, hf } = fixture();
    const before = clone(hf);
    const engine = (seed: number) =>
      OnnxPolicyBackend.create(config, hf, undefined, { provider: 'cpu', sessionOptions: THREADS, lora: { settings: SETTINGS, seed } });
    const [solver, verifier, base] = await Promise.all([
      engine(1),
      engine(2),
      OnnxPolicyBackend.create(config, clone(hf), undefined, { provider: 'cpu', sessionOptions: THREADS }),
    ]);
    const adapterOf = async (e: OnnxPolicyBackend) =>
      ((await e.snapshotTraining()) as unknown as { weights: Map<string, Float32Array> }).weights;
    const scores = async (e: PolicyBackend) =>
      (
        await scoreSequences(
          e,
          PAIRS.map(([p]) => p),
          PAIRS.map(([, r]) => r),
        )
      ).logProbs.flat();
    // PEFT's init (B = 0): each agent starts as the base model.
    expect(await scores(solver)).toEqual(await scores(base));
    const verifierBefore = await adapterOf(verifier);
    const solverBefore = await adapterOf(solver);
    const request = updateRequest(makeBatch(PAIRS, [1, -0.5]), weightedLogLikelihood, 1, { optimizer: { lr: 1e-2 } });
    expect((await solver.update(request)).skipped).toBe(false);
    for (const [name, t] of hf) expect(Buffer.from(t.data.buffer).equals(Buffer.from(before.get(name)!.data.buffer))).toBe(true);
    const solverAfter = await adapterOf(solver);
    // Every B moved (A only by weight decay on this first step: its gradient is zero while B is).
    for (const [name, data] of solverAfter)
      if (name.endsWith('lora_B.weight')) expect(data.some((v, k) => v !== solverBefore.get(name)![k])).toBe(true);
    expect(await adapterOf(verifier)).toEqual(verifierBefore);
    const trained = await scores(solver);
    expect(trained).not.toEqual(await scores(base));
    expect(await scores(verifier)).toEqual(await scores(base));
    // The solver's checkpoint is a PEFT folder; the verifier's engine loading it samples as the solver.
    await solver.save(join(dir, 'solver'));
    await verifier.load(join(dir, 'solver'));
    expect(await scores(verifier)).toEqual(trained);
    for (const e of [solver, verifier, base]) e.dispose();
  });
});
