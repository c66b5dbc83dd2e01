import * as tf from '@tensorflow/tfjs-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { longestResponse, lossTotals, lossTotalsInput, TrainingBatch, type BatchView, type OptimizerSettings } from '@drmas/core';
import { ClippedValueLoss } from '@drmas/plugin-algorithms';
import { valueLoss } from '../../algorithms/test/reference/valueLoss.js';
import { TfjsValueModel } from '../src/critic/TfjsValueModel.js';
import { selectRuntime } from '../src/runtime/RuntimeSelector.js';
import { tfjsTensorOps } from '../src/training/TfjsTensorOps.js';
import { randomModel, tinyConfigJson } from './modelFixtures.js';

beforeAll(async () => {
  await selectRuntime('wasm');
});

const totalsOf = (mask: number[][]) => ({
  tokens: mask.flat().reduce((s, m) => s + m, 0),
  rows: mask.filter((row) => row.some((m) => m > 0)).length,
  responseLength: mask[0]!.length,
  microBatches: 1,
});

/** The clipped value loss and its gradient with respect to the predictions, on tfjs tensors. */
function lossAndGradient(loss: ClippedValueLoss, v: number[][], old: number[][], ret: number[][], mask: number[][]) {
  const input = (values: tf.Tensor) => ({
    values,
    oldValues: tf.tensor2d(old),
    returns: tf.tensor2d(ret),
    responseMask: tf.tensor2d(mask),
    totals: lossTotalsInput(tfjsTensorOps, totalsOf(mask)),
  });
  const grad = tf.grad((values: tf.Tensor) => loss.compute(tfjsTensorOps, input(values)).loss);
  const out = loss.compute(tfjsTensorOps, input(tf.tensor2d(v)));
  return {
    loss: out.loss.dataSync()[0]!,
    clipfrac: out.metrics.vf_clipfrac!.dataSync()[0]!,
    gradient: Array.from(grad(tf.tensor2d(v)).dataSync()),
  };
}

describe('the clipped value loss (veRL compute_value_loss) on tfjs', () => {
  test('hand-worked: 0.5 x token mean of max(unclipped, clipped) squared errors; masked tokens count for nothing', () => {
    // token 0: v 1.0, old 0.5, clip 0.3 -> clipped 0.8; (1 - 0)^2 = 1 > (0.8 - 0)^2 = 0.64: the unclipped error.
    // token 1: v 0.5, old 0 -> clipped 0.3; (0.5 - 1)^2 = 0.25 < (0.3 - 1)^2 = 0.49: the clipped error (a clipped token).
    // token 2 is masked. loss = 0.5 (1 + 0.49) / 2 = 0.3725; clipfrac = 1/2.
    // d loss / d v: token 0: 0.5 x 2 (v - R) / 2 = 0.5; token 1: the clipped branch is constant in v: 0; token 2: 0.
    const out = lossAndGradient(
      new ClippedValueLoss({ clipRange: 0.3, aggregation: 'token-mean' }),
      [[1, 0.5, 9]],
      [[0.5, 0, 0]],
      [[0, 1, -9]],
      [[1, 1, 0]],
    );
    expect(out.loss).toBeCloseTo(0.3725, 6);
    expect(out.clipfrac).toBeCloseTo(0.5, 6);
    expect(out.gradient[0]).toBeCloseTo(0.5, 6);
    expect(out.gradient[1]).toBeCloseTo(0, 12);
    expect(out.gradient[2]).toBeCloseTo(0, 12);
  });

  test("a linear head's gradient matches central finite differences of the float64 reference valueLoss", () => {
    // features x[token] (2 rows x 3 tokens, 4 features); values = x . w + b; some tokens clipped, one masked.
    const x = [
      [
        [0.3, -0.2, 0.5, 0.1],
        [-0.4, 0.6, 0.2, -0.3],
        [0.7, 0.1, -0.5, 0.2],
      ],
      [
        [0.2, 0.3, -0.1, 0.4],
        [-0.6, -0.2, 0.3, 0.5],
        [0.1, -0.7, 0.4, -0.2],
      ],
    ];
    const w0 = [0.4, -0.3, 0.8, 0.2];
    const b0 = 0.05;
    const old = [
      [0.1, 0.0, 0.3],
      [0.2, -0.1, 0.0],
    ];
    const ret = [
      [1.0, -0.5, 0.2],
      [0.6, 0.3, -0.4],
    ];
    const mask = [
      [1, 1, 1],
      [1, 1, 0],
    ];
    for (const aggregation of ['token-mean', 'seq-mean-token-mean'] as const) {
      const clipRange = 0.2;
      const reference = (w: number[], b: number) =>
        valueLoss(
          {
            values: x.map((row) => row.map((f) => f.reduce((s, fi, i) => s + fi * w[i]!, b))),
            oldValues: old,
            returns: ret,
            responseMask: mask,
          },
          { clipRange, aggregation },
        ).loss;
      const loss = new ClippedValueLoss({ clipRange, aggregation });
      const [gw, gb] = tf.tidy(() => {
        const features = tf.tensor3d(x);
        const f = (w: tf.Tensor, b: tf.Tensor) =>
          loss.compute(tfjsTensorOps, {
            values: tf.add(tf.sum(tf.mul(features, w), -1), b),
            oldValues: tf.tensor2d(old),
            returns: tf.tensor2d(ret),
            responseMask: tf.tensor2d(mask),
            totals: lossTotalsInput(tfjsTensorOps, totalsOf(mask)),
          }).loss as tf.Scalar;
        return tf
          .grads(f)([tf.tensor1d(w0), tf.scalar(b0)])
          .map((g) => Array.from(g.dataSync()));
      });
      const h = 1e-6;
      w0.forEach((_, i) => {
        const plus = w0.map((w, j) => (j === i ? w + h : w));
        const minus = w0.map((w, j) => (j === i ? w - h : w));
        expect(gw![i]).toBeCloseTo((reference(plus, b0) - reference(minus, b0)) / (2 * h), 5);
      });
      expect(gb![0]).toBeCloseTo((reference(w0, b0 + h) - reference(w0, b0 - h)) / (2 * h), 5);
      expect(Math.abs(gb![0]!)).toBeGreaterThan(1e-3);
    }
  });
});

const OPTIMIZER: OptimizerSettings = { lr: 1e-2, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0, maxGradNorm: 1, paramGroups: [] };
const PROMPTS = [
  [3, 7, 1],
  [8, 2],
];
const RESPONSES = [
  [12, 5, 20, 2],
  [30, 4],
];

/** The batch of PROMPTS/RESPONSES with `values` and returns of 1 at every response token. */
function batchWithReturns(values: ArrayLike<number>): BatchView {
  const batch = TrainingBatch.fromSequences(PROMPTS, RESPONSES);
  batch.values = Float64Array.from(values);
  batch.returns.set(batch.responseMask);
  return batch.all();
}

async function trainOnce(model: TfjsValueModel, view: BatchView) {
  return model.update({
    batch: view,
    totals: lossTotals(view, { responseLength: longestResponse(view), microBatchSize: 1 }),
    loss: new ClippedValueLoss({ clipRange: 10, aggregation: 'token-mean' }),
    microBatchSize: 1,
    optimizer: OPTIMIZER,
    lrScale: 1,
  });
}

describe('the tfjs value model', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  test('starts at 0 (zero-initialized head); the value of token t is that of the state before it', async () => {
    const model = new TfjsValueModel('critic', 'wasm', { own: randomModel(tinyConfigJson('Qwen2ForCausalLM'), 3) });
    const zero = batchWithReturns(new Float64Array(2 * 4));
    expect(Array.from(await model.values({ batch: zero }))).toEqual(new Array(8).fill(0));
    const result = await trainOnce(model, zero);
    expect(result.gradNorm).toBeGreaterThan(0);
    const values = await model.values({ batch: zero });
    expect(values.some((v) => Math.abs(v) > 1e-4)).toBe(true);
    // Independently: the state before response token t is the prompt followed by the first t response tokens; valued
    // as a prompt of its own with token t as a one-token response, it must give the same number.
    for (const [row, response] of RESPONSES.entries()) {
      for (let t = 0; t < response.length; t++) {
        const alone = TrainingBatch.fromSequences([[...PROMPTS[row]!, ...response.slice(0, t)]], [[response[t]!]]);
        const [value] = await model.values({ batch: alone.all() });
        expect(values[row * 4 + t]).toBeCloseTo(value!, 5);
      }
    }
    expect(values[1 * 4 + 2]).toBe(0);
    model.dispose();
  });

  test('a shared trunk is read, never trained: only the head moves', async () => {
    const trunk = randomModel(tinyConfigJson('Qwen2ForCausalLM'), 4);
    const before = await trunk.exportTensors();
    const model = new TfjsValueModel('critic', 'wasm', { shared: () => trunk });
    expect(model.parameterNames().sort()).toEqual(['score.bias', 'score.weight']);
    await trainOnce(model, batchWithReturns(new Float64Array(8)));
    const after = await trunk.exportTensors();
    for (const [name, tensor] of before) expect(Array.from(after.get(name)!.data)).toEqual(Array.from(tensor.data));
    expect((await model.values({ batch: batchWithReturns(new Float64Array(8)) })).some((v) => v !== 0)).toBe(true);
    model.dispose();
    trunk.dispose();
  });

  test('save then load into a fresh critic continues exactly: same values, same next update', async () => {
    const a = new TfjsValueModel('critic', 'wasm', { own: randomModel(tinyConfigJson('Qwen2ForCausalLM'), 5) });
    const view = batchWithReturns(new Float64Array(8));
    await trainOnce(a, view);
    const dir = mkdtempSync(join(tmpdir(), 'critic-'));
    dirs.push(dir);
    await a.save(dir);
    const b = new TfjsValueModel('critic', 'wasm', { own: randomModel(tinyConfigJson('Qwen2ForCausalLM'), 6) });
    await b.load(dir);
    const old = await a.values({ batch: view });
    expect(Array.from(await b.values({ batch: view }))).toEqual(Array.from(old));
    const next = batchWithReturns(old);
    await trainOnce(a, next);
    await trainOnce(b, next);
    expect(Array.from(await b.values({ batch: view }))).toEqual(Array.from(await a.values({ batch: view })));
    a.dispose();
    b.dispose();
  });
});
