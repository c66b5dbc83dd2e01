import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { longestResponse, lossTotals, TrainingBatch, type BatchView, type OptimizerSettings, type WeightTensor } from '@drmas/core';
import {
  loadModelWeights,
  promptResponseLayout,
  readSafetensors,
  readSafetensorsHeader,
  saveCheckpoint,
  rotaryInverseFrequencies,
  SeededRandom,
  type DecoderConfig,
} from '@drmas/models';
import { ClippedValueLoss } from '@drmas/plugin-algorithms';
import { valueLoss } from '../../algorithms/test/reference/valueLoss.js';
import { DecoderModel, selectRuntime } from '@drmas/plugin-backend-tfjs';
import { TfjsValueModel } from '../../backend-tfjs/src/critic/TfjsValueModel.js';
import { OnnxValueModel, valueSessionPool, type ValueSession } from '../src/critic/OnnxValueModel.js';
import { createOnnxBackendFactory } from '../src/plugin/OnnxBackendPlugin.js';
import type { SharedSessions } from '../src/SharedSessions.js';
import { buildValueGraph, HEAD_BIAS, HEAD_WEIGHT, ValueNames } from '../src/critic/ValueGraph.js';
import { forwardFeeds, ortTensor, type Feeds } from '../src/DecoderFeeds.js';
import { GraphNames } from '../src/DecoderGraph.js';
import { loadOnnxRuntime, type Ort } from '../src/ExecutionProvider.js';
import { accumulateGradients } from '../src/training/ClippedStep.js';
import { TrainingNames } from '../src/training/TrainingGraph.js';
import { randomWeights, tinyConfigJson } from './parityFixtures.js';

const onnxBackendFactory = createOnnxBackendFactory();

/**
 * The onnx critic (issue 19): its value-loss gradient against central finite differences of the float64 reference
 * `valueLoss` over the graph's values, and its values, update and checkpoints against the tfjs critic's on the same
 * weights.
 */

let ort: Ort;
beforeAll(async () => {
  ort = await loadOnnxRuntime();
  await selectRuntime('wasm');
});

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'onnx-critic-'));
  dirs.push(dir);
  return dir;
};

const PROMPTS = [[3, 7, 1, 9], [8], [30, 4, 11]];
const RESPONSES = [
  [12, 5, 20, 2],
  [30, 4, 11, 7, 7, 1],
  [6, 9],
];
const CLIP = 0.2;
const OPTIMIZER: OptimizerSettings = { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1, paramGroups: [] };

/** The batch with old values and returns drawn so that some tokens clip (|v - old| > CLIP) and some do not. */
function makeView(seed: number): BatchView {
  const batch = TrainingBatch.fromSequences(PROMPTS, RESPONSES);
  const rng = new SeededRandom(seed);
  batch.values = new Float64Array(batch.rows * batch.responseLength);
  for (let i = 0; i < batch.values.length; i++) {
    if (batch.responseMask[i] === 0) continue;
    batch.values[i] = (rng.uniform() * 2 - 1) * 0.6;
    batch.returns[i] = (rng.uniform() * 2 - 1) * 1.5;
  }
  return batch.all();
}

const copyWeights = (weights: Map<string, WeightTensor>) =>
  new Map([...weights].map(([name, t]) => [name, { shape: [...t.shape], data: Float32Array.from(t.data) }]));

const matrix = (view: BatchView, flat: ArrayLike<number>) => {
  const R = view.batch.responseLength;
  return Array.from(view.rows, (r) => Array.from({ length: R }, (_, t) => flat[r * R + t]!));
};

describe('the value-loss gradient of the onnx critic graph', () => {
  test('matches central finite differences of the float64 reference valueLoss (head and trunk, tied Qwen2)', async () => {
    const { config, weights } = randomWeights(tinyConfigJson('Qwen2ForCausalLM', { tie_word_embeddings: true }), 11);
    const rng = new SeededRandom(5);
    const head = new Map<string, WeightTensor>([
      [HEAD_WEIGHT, { shape: [1, config.hiddenSize], data: rng.fillNormal(new Float32Array(config.hiddenSize), 0.3) }],
      [HEAD_BIAS, { shape: [1], data: Float32Array.of(0.1) }],
    ]);
    const view = makeView(3);
    const { batch } = view;
    const loss = new ClippedValueLoss({ clipRange: CLIP, aggregation: 'token-mean' });
    const valuesGraph = buildValueGraph(config, weights, { trainTrunk: true });
    const trainGraph = buildValueGraph(config, weights, { loss, trainTrunk: true });
    const valuesSession = await ort.InferenceSession.create(valuesGraph.model);
    const trainSession = await ort.InferenceSession.create(trainGraph.model);
    const R = batch.responseLength;
    const layout = promptResponseLayout(
      PROMPTS,
      Array.from(view.rows, (r) => batch.responseIds.subarray(r * R, r * R + R)),
      R,
    );
    const feeds = (): Feeds => ({
      ...Object.fromEntries([...weights, ...head].map(([name, w]) => [name, ortTensor(ort, w.data, w.shape)])),
      ...layoutFeeds(ort, config, layout),
    });
    const reference = async (): Promise<number> => {
      const out = await valuesSession.run(feeds());
      const v = out[ValueNames.values]!.data as Float32Array;
      return valueLoss(
        {
          values: matrix(view, v),
          oldValues: matrix(view, batch.values!),
          returns: matrix(view, batch.returns),
          responseMask: matrix(view, batch.responseMask),
        },
        { clipRange: CLIP, aggregation: 'token-mean' },
      ).loss;
    };
    const totals = lossTotals(view, { responseLength: R, microBatchSize: 1 });
    const column = (flat: ArrayLike<number>) => ortTensor(ort, Float32Array.from(flat), [view.rows.length, R]);
    const out = await trainSession.run({
      ...feeds(),
      [TrainingNames.totals.tokens]: ortTensor(ort, Float32Array.of(totals.tokens), []),
      [TrainingNames.totals.rows]: ortTensor(ort, Float32Array.of(totals.rows), []),
      [TrainingNames.totals.responseLength]: ortTensor(ort, Float32Array.of(totals.responseLength), []),
      [ValueNames.oldValues]: column(batch.values!),
      [ValueNames.returns]: column(batch.returns),
      [TrainingNames.responseMask]: column(batch.responseMask),
    });
    expect((out[TrainingNames.loss]!.data as Float32Array)[0]).toBeCloseTo(await reference(), 5);
    const gradients = new Map([...weights, ...head].map(([name, w]) => [name, new Float32Array(w.data.length)]));
    accumulateGradients(gradients, out, trainGraph);
    // Every head entry, and a few entries of trunk tensors of each kind (the embedding's rows include a prompt token's).
    const probes: [string, number][] = [
      ...Array.from({ length: config.hiddenSize }, (_, i): [string, number] => [HEAD_WEIGHT, i]),
      [HEAD_BIAS, 0],
      ['model.embed_tokens.weight', 3 * config.hiddenSize + 5],
      ['model.embed_tokens.weight', 12 * config.hiddenSize + 17],
      ['model.layers.0.self_attn.q_proj.weight', 37],
      ['model.layers.0.self_attn.k_proj.bias', 3],
      ['model.layers.1.mlp.down_proj.weight', 101],
      ['model.layers.1.post_attention_layernorm.weight', 9],
      ['model.norm.weight', 4],
    ];
    const h = 1e-2;
    let checked = 0;
    for (const [name, i] of probes) {
      const data = (weights.get(name) ?? head.get(name))!.data;
      const original = data[i]!;
      data[i] = original + h;
      const plus = await reference();
      data[i] = original - h;
      const minus = await reference();
      data[i] = original;
      const numeric = (plus - minus) / (2 * h);
      const analytic = gradients.get(name)![i]!;
      expect(Math.abs(analytic - numeric)).toBeLessThanOrEqual(2e-4 + 2e-2 * Math.abs(numeric));
      if (Math.abs(numeric) > 1e-3) checked++;
    }
    // Most probes have a gradient well away from 0 (the check is not vacuous).
    expect(checked).toBeGreaterThan(probes.length * 0.7);
    await valuesSession.release();
    await trainSession.release();
  });
});

/** The critic graphs' forward inputs for a layout (what `OnnxValueModel` feeds). */
function layoutFeeds(ort: Ort, config: DecoderConfig, layout: ReturnType<typeof promptResponseLayout>): Feeds {
  const { rows, promptColumns: p, responseColumns: r } = layout;
  const feeds = forwardFeeds(ort, config, rotaryInverseFrequencies(config), { ...layout, rows, columns: p + r });
  feeds[GraphNames.predictStart] = ortTensor(ort, BigInt64Array.of(BigInt(p - 1)), [1]);
  feeds[GraphNames.predictEnd] = ortTensor(ort, BigInt64Array.of(BigInt(p - 1 + r)), [1]);
  return feeds;
}

/** `|a - b| <= tol * max(|b|)` over all entries: relative to the tensor's scale. */
function expectClose(a: ArrayLike<number>, b: ArrayLike<number>, tol: number): void {
  expect(a.length).toBe(b.length);
  let scale = 0;
  let diff = 0;
  for (let i = 0; i < b.length; i++) {
    scale = Math.max(scale, Math.abs(b[i]!));
    diff = Math.max(diff, Math.abs(a[i]! - b[i]!));
  }
  expect(diff).toBeLessThanOrEqual(tol * Math.max(scale, 1e-6));
}

/** One loss for every update, as the trainer passes: a critic builds a training session per loss. */
const VALUE_LOSS = new ClippedValueLoss({ clipRange: CLIP, aggregation: 'token-mean' });
const updateOf = (view: BatchView, microBatchSize: number) => ({
  batch: view,
  totals: lossTotals(view, { responseLength: longestResponse(view), microBatchSize }),
  loss: VALUE_LOSS,
  microBatchSize,
  optimizer: OPTIMIZER,
  lrScale: 1,
});

describe('the onnx critic against the tfjs critic on the same weights', () => {
  test('values, one update (micro-batches of 2: loss, gradient norm, updated weights) and checkpoints in both directions', async () => {
    const { config, weights } = randomWeights(tinyConfigJson('Qwen3ForCausalLM'), 21);
    const onnx = await OnnxValueModel.create('onnx', 'cpu', { own: { config, weights: copyWeights(weights) } });
    const tfjs = new TfjsValueModel('tfjs', 'wasm', { own: DecoderModel.fromTensors(config, copyWeights(weights)) });
    expect(onnx.parameterNames().sort()).toEqual(tfjs.parameterNames().sort());
    const view = makeView(7);
    expect(Array.from(await onnx.values({ batch: view })).every((v) => v === 0)).toBe(true);

    // Two steps: the first moves the zero head, the second's loss and gradients then flow through the trunk too.
    for (let step = 0; step < 2; step++) {
      const a = await onnx.update(updateOf(view, 2));
      const b = await tfjs.update(updateOf(view, 2));
      expect(Math.abs(a.loss - b.loss)).toBeLessThanOrEqual(1e-4 * Math.abs(b.loss));
      expect(Math.abs(a.gradNorm - b.gradNorm)).toBeLessThanOrEqual(1e-4 * b.gradNorm);
      expect(a.metrics.vf_clipfrac).toBeCloseTo(b.metrics.vf_clipfrac!, 6);
      expect(a.metrics.vpred_mean).toBeCloseTo(b.metrics.vpred_mean!, 5);
    }
    const values = await onnx.values({ batch: view });
    expect(values.some((v) => Math.abs(v) > 1e-3)).toBe(true);
    expectClose(values, await tfjs.values({ batch: view }), 1e-4);

    const fromOnnx = tempDir();
    const fromTfjs = tempDir();
    await onnx.save(fromOnnx);
    await tfjs.save(fromTfjs);
    for (const file of ['model.safetensors', 'value_head.safetensors', 'optimizer.safetensors']) {
      const [a, b] = await Promise.all([readSafetensors(join(fromOnnx, file)), readSafetensors(join(fromTfjs, file))]);
      expect([...a.tensors.keys()].sort()).toEqual([...b.tensors.keys()].sort());
      for (const [name, t] of b.tensors) expectClose(a.tensors.get(name)!.data, t.data, 1e-4);
    }

    // Each backend's checkpoint, loaded on the other, gives the values of the critic that wrote it.
    const other = randomWeights(tinyConfigJson('Qwen3ForCausalLM'), 22);
    const onnxFromTfjs = await OnnxValueModel.create('onnx', 'cpu', { own: { config, weights: copyWeights(other.weights) } });
    await onnxFromTfjs.load(fromTfjs);
    expectClose(await onnxFromTfjs.values({ batch: view }), await tfjs.values({ batch: view }), 1e-4);
    const tfjsFromOnnx = new TfjsValueModel('tfjs', 'wasm', { own: DecoderModel.fromTensors(config, copyWeights(other.weights)) });
    await tfjsFromOnnx.load(fromOnnx);
    expectClose(await tfjsFromOnnx.values({ batch: view }), values, 1e-4);
    // And trains on from the other's optimizer state: the next update matches the writer's.
    const next = await onnxFromTfjs.update(updateOf(view, 3));
    const reference = await tfjs.update(updateOf(view, 3));
    expect(Math.abs(next.gradNorm - reference.gradNorm)).toBeLessThanOrEqual(1e-4 * reference.gradNorm);
    expectClose(await onnxFromTfjs.values({ batch: view }), await tfjs.values({ batch: view }), 1e-4);
    for (const model of [onnx, tfjs, onnxFromTfjs, tfjsFromOnnx]) model.dispose();
  });

  test('a checkpoint resumes exactly: the loaded critic gives the same values and takes the same next update, bit for bit', async () => {
    // A trunk read from a bfloat16 checkpoint, as the presets' bases are: the loader's tensors say BF16, and a save
    // that followed them rounded the trained trunk back to bfloat16 (a resumed run then valued with other weights).
    const base = randomWeights({ ...tinyConfigJson('Qwen2ForCausalLM'), torch_dtype: 'bfloat16' }, 31);
    const baseDir = tempDir();
    await saveCheckpoint(baseDir, {
      config: { ...tinyConfigJson('Qwen2ForCausalLM'), torch_dtype: 'bfloat16' },
      tensors: base.weights,
      dtype: 'BF16',
    });
    const { config, weights } = await loadModelWeights({ model: baseDir });
    expect([...weights.values()].every((t) => (t as { dtype?: string }).dtype === 'BF16')).toBe(true);
    const view = makeView(7);
    const first = await OnnxValueModel.create('onnx', 'cpu', { own: { config, weights } });
    for (let step = 0; step < 2; step++) await first.update(updateOf(view, 2));
    const dir = tempDir();
    await first.save(dir);
    const saved = await readSafetensorsHeader(join(dir, 'model.safetensors'));
    expect(new Set([...saved.tensors.values()].map((t) => t.dtype))).toEqual(new Set(['F32']));
    const other = randomWeights(tinyConfigJson('Qwen2ForCausalLM'), 32);
    const resumed = await OnnxValueModel.create('onnx', 'cpu', { own: { config, weights: copyWeights(other.weights) } });
    // Sessions made before the load (a run's setup may score or train before it resumes) read the loaded weights too.
    await resumed.values({ batch: view });
    await resumed.update(updateOf(view, 2));
    await resumed.load(dir);
    expect(Array.from(await resumed.values({ batch: view }))).toEqual(Array.from(await first.values({ batch: view })));
    const [a, b] = [await first.update(updateOf(view, 2)), await resumed.update(updateOf(view, 2))];
    expect([b.loss, b.gradNorm]).toEqual([a.loss, a.gradNorm]);
    expect(Array.from(await resumed.values({ batch: view }))).toEqual(Array.from(await first.values({ batch: view })));
    for (const model of [first, resumed]) model.dispose();
  });

  test("a run's critics of one architecture share their sessions; each values and trains bit for bit as it does alone", async () => {
    const trunks = [21, 22].map((seed) => randomWeights(tinyConfigJson('Qwen3ForCausalLM'), seed));
    const critic = (i: number, sessions?: SharedSessions<ValueSession>) =>
      OnnxValueModel.create(
        `critic${i}`,
        'cpu',
        { own: { config: trunks[i]!.config, weights: copyWeights(trunks[i]!.weights) } },
        {},
        sessions,
      );
    const pool = valueSessionPool();
    const shared = [await critic(0, pool), await critic(1, pool)];
    const alone = [await critic(0), await critic(1)];
    const view = makeView(7);
    const behaviour = async (model: OnnxValueModel) => {
      const { loss, gradNorm } = await model.update(updateOf(view, 2));
      const second = await model.update(updateOf(view, 2));
      return { loss, gradNorm, second: [second.loss, second.gradNorm], values: Array.from(await model.values({ batch: view })) };
    };
    const [a, b] = [await behaviour(shared[0]!), await behaviour(shared[1]!)];
    // One values graph and one training graph for both.
    expect(pool.size).toBe(2);
    expect(a.values).not.toEqual(b.values);
    expect(a).toEqual(await behaviour(alone[0]!));
    expect(b).toEqual(await behaviour(alone[1]!));
    shared[0]!.dispose();
    expect(pool.size).toBe(2);
    expect(await behaviour(shared[1]!)).toEqual(await behaviour(alone[1]!));
    shared[1]!.dispose();
    expect(pool.size).toBe(0);
    for (const model of alone) model.dispose();
  });

  test("the plugin gives a run's critics one pool: two critics of a run share their sessions, another run's do not", async () => {
    const make = (run: object, criticId: string) =>
      onnxBackendFactory.createCritic!({
        criticId,
        settings: { model: 'tiny', seed: 3, runtime: 'auto', backend: 'onnx' },
        run: run as never,
      }) as Promise<OnnxValueModel>;
    const [run, otherRun] = [{ log: () => {} }, { log: () => {} }];
    const [left, right, other] = [await make(run, 'left'), await make(run, 'right'), await make(otherRun, 'left')];
    for (const loss of [undefined, VALUE_LOSS]) {
      expect((await left.session(loss)).session).toBe((await right.session(loss)).session);
      expect((await other.session(loss)).session).not.toBe((await left.session(loss)).session);
    }
    for (const model of [left, right, other]) model.dispose();
  });

  test('on a shared trunk only the head trains, and values match an own trunk of the same weights', async () => {
    const { config, weights } = randomWeights(tinyConfigJson('LlamaForCausalLM'), 31);
    const before = copyWeights(weights);
    const shared = await OnnxValueModel.create('shared', 'cpu', { shared: () => ({ config, weights }) });
    expect(shared.parameterNames().sort()).toEqual([HEAD_BIAS, HEAD_WEIGHT]);
    const tfjsTrunk = DecoderModel.fromTensors(config, copyWeights(weights));
    const tfjs = new TfjsValueModel('tfjs', 'wasm', { shared: () => tfjsTrunk });
    const view = makeView(9);
    for (let step = 0; step < 2; step++) {
      const a = await shared.update(updateOf(view, 1));
      const b = await tfjs.update(updateOf(view, 1));
      expect(Math.abs(a.gradNorm - b.gradNorm)).toBeLessThanOrEqual(1e-4 * b.gradNorm);
    }
    for (const [name, t] of before) expect(Array.from(weights.get(name)!.data)).toEqual(Array.from(t.data));
    expectClose(await shared.values({ batch: view }), await tfjs.values({ batch: view }), 1e-4);
    shared.dispose();
    tfjs.dispose();
    tfjsTrunk.dispose();
  });
});
