import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as tf from '@tensorflow/tfjs-core';
import {
  lossTotals,
  partMicroBatches,
  lossTotalsInput,
  TrainingBatch,
  type BatchView,
  type LossFunction,
  type LossTotals,
  type WeightTensor,
} from '@drmas/core';
import { promptResponseLayout, SeededRandom, type DecoderConfig, type HostTensor } from '@drmas/models';
import { DpoLossFunction, NllLossFunction, PolicyLossFunction, type DpoSettings } from '@drmas/plugin-algorithms';
import { DecoderModel, selectRuntime, tfjsTensorOps } from '@drmas/plugin-backend-tfjs';
import { responseTokenStats } from '../../backend-tfjs/src/model/responseLogProbs.js';
import { OnnxTrainer, trainingSessionPool } from '../src/training/OnnxTrainer.js';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { ARCHITECTURE_CASES, policyLoss, randomWeights, relativeError, tinyConfigJson } from './parityFixtures.js';

/**
 * The onnx training graph's loss, metrics and gradients (every weight, in the graph's layout) against tfjs autodiff
 * (`tf.variableGrads` through the tfjs DecoderModel and the same LossFunction) on small random models of each
 * architecture, over two micro-batches, per-row temperatures, mixed prompt and response lengths.
 */

const policy = policyLoss;

const LOSSES: { label: string; loss: LossFunction }[] = [
  { label: 'PPO (vanilla, dual clip), token-mean', loss: policy({}) },
  {
    label: 'PPO + k3 KL + entropy bonus, seq-mean-token-mean',
    loss: policy({ aggregation: 'seq-mean-token-mean', klCoef: 0.1, entropyCoef: 0.01 }),
  },
  {
    label: 'CISPO + k2 KL, seq-mean-token-sum-norm',
    loss: policy({ variant: 'cispo', aggregation: 'seq-mean-token-sum-norm', klCoef: 0.2, klType: 'k2' }),
  },
  {
    label: 'GSPO (sequence ratio, GSPO-token gradient), seq-mean-token-mean',
    loss: policy({ variant: 'gspo', aggregation: 'seq-mean-token-mean' }),
  },
  {
    label: 'GPG + |KL| + entropy minimization, seq-mean-token-sum',
    loss: policy({ variant: 'gpg', aggregation: 'seq-mean-token-sum', klCoef: 0.05, klType: 'abs', entropyCoef: -0.02 }),
  },
  { label: 'NLL (drmas sft)', loss: new NllLossFunction() },
];

const PROMPTS = [[3, 7, 1, 9, 4, 22], [8], [30, 4, 11, 2]];
const RESPONSES = [
  [12, 5, 20, 2],
  [30, 4, 11, 7, 7, 1, 40],
  [6, 9],
];
const TEMPERATURES = [1, 0.7, 1.3];
const MICRO_BATCH = 2;

/**
 * The batch: old and reference log-probs are the model's own plus noise (so the PPO ratio leaves the clip range on
 * some tokens and passes the dual-clip bound on others), advantages of both signs.
 */
function makeView(model: DecoderModel, seed: number): BatchView {
  const batch = TrainingBatch.fromSequences(PROMPTS, RESPONSES, { temperatures: TEMPERATURES });
  const R = batch.responseLength;
  batch.oldLogProbs = new Float32Array(batch.rows * R);
  batch.refLogProbs = new Float32Array(batch.rows * R);
  const view = batch.all();
  const logp = tfjsLogProbs(model, view);
  const rng = new SeededRandom(seed);
  for (let i = 0; i < batch.rows * R; i++) {
    if (batch.responseMask[i] === 0) continue;
    // Every fifth token: ratio e^1.5 ~ 4.5 with a negative advantage, beyond the dual-clip bound of 3.
    const dualClipped = i % 5 === 0;
    batch.oldLogProbs[i] = logp[i]! + (dualClipped ? -1.5 : (rng.uniform() * 2 - 1) * 1.3);
    batch.refLogProbs[i] = logp[i]! + (rng.uniform() * 2 - 1) * 0.5;
    batch.advantages[i] = dualClipped ? -0.5 - rng.uniform() : rng.uniform() * 2 - 1;
  }
  // The NLL's per-token weights (drmas sft's column): the same random values.
  batch.lossWeights = Float32Array.from(batch.advantages);
  return view;
}

/** Micro-batch loss inputs as the tfjs trainer builds them (PolicyTrainer.lossInput), response columns trimmed. */
function tfjsLossInput(model: DecoderModel, view: BatchView, rows: Int32Array, totals: LossTotals, withEntropy: boolean) {
  const { batch } = view;
  const R = batch.responseLength;
  let columns = 1;
  for (const r of rows) for (let j = 0; j < R; j++) if (batch.responseMask[r * R + j] !== 0) columns = Math.max(columns, j + 1);
  const take = (flat: ArrayLike<number>) =>
    tf.tensor2d(
      Float32Array.from({ length: rows.length * columns }, (_, k) => flat[rows[Math.floor(k / columns)]! * R + (k % columns)]!),
      [rows.length, columns],
    );
  // DPO's preference column: +1 on a chosen row, -1 on a rejected one, read from the batch's pairs.
  const side = (r: number) => (batch.pairs?.chosen.includes(r) ? 1 : batch.pairs?.rejected.includes(r) ? -1 : 0);
  const preference = tf.tensor2d(
    Float32Array.from({ length: rows.length * columns }, (_, k) => side(rows[Math.floor(k / columns)]!)),
    [rows.length, columns],
  );
  const layout = promptResponseLayout(
    Array.from(rows, (r) => batch.promptIds[r]!),
    Array.from(rows, (r) => batch.responseIds.subarray(r * R, r * R + columns)),
    columns,
  );
  const stats = responseTokenStats(
    model,
    layout,
    withEntropy,
    true,
    Array.from(rows, (r) => batch.temperatures[r]!),
  );
  return {
    logProbs: stats.logProbs,
    oldLogProbs: take(batch.oldLogProbs!),
    advantages: take(batch.advantages),
    lossWeights: batch.lossWeights && take(batch.lossWeights),
    preference,
    responseMask: take(batch.responseMask),
    refLogProbs: take(batch.refLogProbs!),
    entropy: stats.entropy,
    totals: lossTotalsInput(tfjsTensorOps, totals),
  };
}

function tfjsLogProbs(model: DecoderModel, view: BatchView): Float32Array {
  const R = view.batch.responseLength;
  const out = new Float32Array(view.batch.rows * R);
  tf.tidy(() => {
    const input = tfjsLossInput(model, view, view.rows, lossTotals(view, { responseLength: R, microBatchSize: 0 }), false);
    const lp = input.logProbs.dataSync();
    const columns = input.logProbs.shape[1];
    view.rows.forEach((r, i) => out.set(lp.subarray(i * columns, (i + 1) * columns), r * R));
  });
  return out;
}

/** The tfjs reference: loss, metrics and Hugging Face-named gradients summed over micro-batches. */
function tfjsGradients(model: DecoderModel, view: BatchView, totals: LossTotals, loss: LossFunction) {
  const variables = [...model.weights.values()];
  const names = [...model.weights.keys()];
  const sums = new Map<string, Float32Array>(names.map((n, i) => [n, new Float32Array(variables[i]!.size)]));
  const metrics: Record<string, number> = {};
  let lossSum = 0;
  for (let start = 0; start < view.rows.length; start += MICRO_BATCH) {
    const rows = view.rows.subarray(start, start + MICRO_BATCH);
    const metricValues: Record<string, number> = {};
    const { value, grads } = tf.variableGrads(() => {
      const out = loss.compute(tfjsTensorOps, tfjsLossInput(model, view, rows, totals, loss.needsEntropy ?? false));
      for (const [k, t] of Object.entries(out.metrics)) metricValues[k] = t.dataSync()[0]!;
      return out.loss as tf.Scalar;
    }, variables);
    lossSum += value.dataSync()[0]!;
    for (const [k, v] of Object.entries(metricValues)) metrics[k] = (metrics[k] ?? 0) + v;
    variables.forEach((v, i) => {
      const g = grads[v.name];
      if (!g) return;
      const data = g.dataSync();
      const sum = sums.get(names[i]!)!;
      for (let j = 0; j < sum.length; j++) sum[j]! += data[j]!;
    });
    value.dispose();
    tf.dispose(grads);
  }
  const hf = new Map<string, WeightTensor>(names.map((n, i) => [n, { shape: [...variables[i]!.shape], data: sums.get(n)! }]));
  return { loss: lossSum, metrics, hf };
}

/**
 * The quick run: the PPO loss on every architecture and every loss on Qwen3 (q/k norm) with tied embeddings; the
 * slow run: the other losses on the other architectures.
 */
const QUICK_ARCHITECTURE = 'Qwen3 (q/k norm), tied';
const quick = ARCHITECTURE_CASES.map((a) => ({ ...a, losses: a.label === QUICK_ARCHITECTURE ? LOSSES : LOSSES.slice(0, 1) }));
const slow = ARCHITECTURE_CASES.filter((a) => a.label !== QUICK_ARCHITECTURE).map((a) => ({ ...a, losses: LOSSES.slice(1) }));

describe.each(quick)('onnx training graph vs tfjs autodiff: $label', (c) => compareGradients(c));
describeSlow.each(slow)('onnx training graph vs tfjs autodiff (slow): $label', (c) => compareGradients(c));

function compareGradients({ architecture, extra, losses }: (typeof quick)[number]): void {
  let config: DecoderConfig;
  let weights: Map<string, HostTensor>;
  let model: DecoderModel;
  const trainers: OnnxTrainer[] = [];
  let view: BatchView;
  beforeAll(async () => {
    await selectRuntime('cpu');
    ({ config, weights } = randomWeights(tinyConfigJson(architecture, extra), 5));
    model = DecoderModel.fromTensors(config, weights);
    trainers.push(await OnnxTrainer.create(config, weights));
    // The tiny vocabulary of 48 in chunks of 20, 20 and 8 (`writeChunkedScoreHead`).
    trainers.push(await OnnxTrainer.create(config, weights, {}, { vocabChunk: 20 }));
    // The Hugging Face tensors read in place (`Gemm` with transB, no derived copy), as at real model sizes.
    trainers.push(await OnnxTrainer.create(config, weights, {}, { layout: 'shared' }));
    trainers.push(await OnnxTrainer.create(config, weights, {}, { layout: 'shared', vocabChunk: 20 }));
    view = makeView(model, 17);
  });
  afterAll(async () => {
    model.dispose();
    for (const trainer of trainers) await trainer.release();
  });

  const cases = losses.flatMap((c) => [
    { ...c, head: 'one LogSoftmax', trainer: 0 },
    { ...c, head: 'vocabulary in chunks', trainer: 1 },
    { ...c, head: 'shared weights, one LogSoftmax', trainer: 2 },
    { ...c, head: 'shared weights, vocabulary in chunks', trainer: 3 },
  ]);
  it.each(cases)('$label, $head: loss, metrics and every gradient within 1e-4 relative', async ({ loss, trainer: which }) => {
    const trainer = trainers[which]!;
    const totals = lossTotals(view, { responseLength: 7, microBatchSize: MICRO_BATCH });
    const expected = tfjsGradients(model, view, totals, loss);
    const got = await trainer.gradients({ batch: view, totals, loss, microBatchSize: MICRO_BATCH });
    expect(Math.abs(got.loss - expected.loss)).toBeLessThan(1e-4 * Math.max(1, Math.abs(expected.loss)));
    expect(Object.keys(got.metrics).sort()).toEqual(Object.keys(expected.metrics).sort());
    for (const [k, v] of Object.entries(expected.metrics))
      expect(Math.abs(got.metrics[k]! - v)).toBeLessThan(1e-4 * Math.max(1, Math.abs(v)));
    if (loss instanceof PolicyLossFunction && loss.settings.variant === 'vanilla') {
      // Clipping is active on some tokens, not all, and the dual clip on some negative-advantage tokens.
      expect(got.metrics.pg_clipfrac).toBeGreaterThan(0.05);
      expect(got.metrics.pg_clipfrac).toBeLessThan(0.95);
      expect(got.metrics.pg_clipfrac_lower).toBeGreaterThan(0);
    }
    expect([...got.gradients.keys()].sort()).toEqual([...expected.hf.keys()].sort());
    const errors = [...expected.hf].map(([name, t]) => [name, relativeError(got.gradients.get(name)!, t.data)] as const);
    const worst = errors.reduce((a, b) => (b[1] > a[1] ? b : a));
    expect(worst[1]).toBeLessThan(1e-4);
  });

  it.each([0, 3])('micro-batches by a token budget (trainer %i): loss and every gradient as tfjs over the whole batch', async (which) => {
    const { loss } = losses[0]!;
    const totals = lossTotals(view, { responseLength: 7, microBatchSize: MICRO_BATCH });
    // Rows of 6 + 4, 1 + 7 and 4 + 2 tokens: 22 padded tokens cut them [0], [1, 2] (2 x (6 + 7) = 26 would not fit).
    const budget = { tokens: 22, batch: view.batch };
    expect(partMicroBatches(view.rows, 0, undefined, budget).map((m) => Array.from(m.rows))).toEqual([[0], [1, 2]]);
    const expected = tfjsGradients(model, view, totals, loss);
    const got = await trainers[which]!.gradients({ batch: view, totals, loss, microBatchTokens: budget.tokens });
    expect(got.microBatches).toBe(2);
    expect(Math.abs(got.loss - expected.loss)).toBeLessThan(1e-4 * Math.max(1, Math.abs(expected.loss)));
    for (const [name, t] of expected.hf) expect(relativeError(got.gradients.get(name)!, t.data)).toBeLessThan(1e-4);
  });
}

/**
 * The totals are fed per run, not baked into a session: one trainer (one session per loss) given the same rows with
 * every total doubled returns exactly half the loss and every gradient (scaling the backward's seed by a power of two commutes with float
 * rounding), for aggregations that divide by each of tokens, rows and response length.
 */
describe('onnx training graph: totals fed per run', () => {
  let trainer: OnnxTrainer;
  let view: BatchView;
  beforeAll(async () => {
    await selectRuntime('cpu');
    const { config, weights } = randomWeights(tinyConfigJson('Qwen3ForCausalLM', { tie_word_embeddings: true }), 5);
    const model = DecoderModel.fromTensors(config, weights);
    view = makeView(model, 17);
    model.dispose();
    trainer = await OnnxTrainer.create(config, weights);
  });
  afterAll(() => trainer.release());

  it.each(LOSSES.slice(0, 3))('$label: doubled totals halve the loss and every gradient exactly', async ({ loss }) => {
    const totals = lossTotals(view, { responseLength: 7, microBatchSize: MICRO_BATCH });
    const doubled = { ...totals, tokens: 2 * totals.tokens, rows: 2 * totals.rows, responseLength: 2 * totals.responseLength };
    const once = await trainer.gradients({ batch: view, totals, loss, microBatchSize: MICRO_BATCH });
    const onceLoss = once.loss;
    const halves = new Map([...once.gradients].map(([name, g]) => [name, g.map((v) => v / 2)]));
    const sessions = trainer.sessionCount;
    const twice = await trainer.gradients({ batch: view, totals: doubled, loss, microBatchSize: MICRO_BATCH });
    expect(trainer.sessionCount).toBe(sessions);
    expect(twice.loss).toBe(onceLoss / 2);
    const unequal = [...twice.gradients].filter(([name, g]) => !g.every((v, i) => v === halves.get(name)![i]));
    expect(unequal.map(([name]) => name)).toEqual([]);
    expect(Math.max(...[...halves.values()].map((g) => Math.max(...g.map(Math.abs))))).toBeGreaterThan(0);
  });
});

const DPO_QUICK = [{ variant: 'sigmoid', beta: 0.3, labelSmoothing: 0.1 }] as const;
const DPO_SLOW = [
  { variant: 'ipo', beta: 0.5 },
  { variant: 'hinge', beta: 0.2 },
] as const;
describe('onnx training graph vs tfjs autodiff: the DPO loss over preference pairs (Qwen3, tied)', () => compareDpo(DPO_QUICK));
describeSlow('onnx training graph vs tfjs autodiff (slow): the DPO loss over preference pairs (Qwen3, tied)', () => compareDpo(DPO_SLOW));

function compareDpo(cases: readonly DpoSettings[]): void {
  const architecture = ARCHITECTURE_CASES.find((a) => a.label === QUICK_ARCHITECTURE)!;
  let model: DecoderModel;
  let trainer: OnnxTrainer;
  beforeAll(async () => {
    await selectRuntime('cpu');
    const { config, weights } = randomWeights(tinyConfigJson(architecture.architecture, architecture.extra), 5);
    model = DecoderModel.fromTensors(config, weights);
    trainer = await OnnxTrainer.create(config, weights);
  });
  afterAll(async () => {
    model.dispose();
    await trainer.release();
  });

  it.each(cases)('$variant: loss, metrics and every gradient within 1e-4 relative, micro-batches of one pair', async (settings) => {
    const { view, loss, totals } = preferenceBatch(settings);
    const expected = tfjsGradients(model, view, totals, loss);
    const got = await trainer.gradients({ batch: view, totals, loss, microBatchSize: MICRO_BATCH });
    expect(Math.abs(got.loss - expected.loss)).toBeLessThan(1e-4 * Math.max(1, Math.abs(expected.loss)));
    for (const [k, v] of Object.entries(expected.metrics))
      expect(Math.abs(got.metrics[k]! - v)).toBeLessThan(1e-4 * Math.max(1, Math.abs(v)));
    const worst = Math.max(...[...expected.hf].map(([name, t]) => relativeError(got.gradients.get(name)!, t.data)));
    expect(worst).toBeLessThan(1e-4);
    expect(Math.max(...[...expected.hf.values()].map((t) => Math.max(...t.data.map(Math.abs))))).toBeGreaterThan(1e-6);
  });

  it('micro-batches by a token budget take whole pairs: the gradient of the whole batch', async () => {
    const { view, loss, totals } = preferenceBatch(cases[0]!);
    // Rows of 6 + 4, 1 + 7, 6 + 2 and 1 + 2 tokens: 40 padded tokens, row by row, would cut [0, 1, 2] (3 x 13 = 39)
    // and [3], splitting the second pair; by pairs [0, 1] (2 x 13 = 26; both pairs 4 x 13 = 52) and [2, 3].
    expect(partMicroBatches(view.rows, 0, undefined, { tokens: 40, batch: view.batch }).map((m) => m.rows.length)).toEqual([3, 1]);
    const expected = tfjsGradients(model, view, totals, loss);
    const got = await trainer.gradients({ batch: view, totals, loss, microBatchTokens: 40 });
    expect(got.microBatches).toBe(2);
    expect(Math.abs(got.loss - expected.loss)).toBeLessThan(1e-4 * Math.max(1, Math.abs(expected.loss)));
    const worst = Math.max(...[...expected.hf].map(([name, t]) => relativeError(got.gradients.get(name)!, t.data)));
    expect(worst).toBeLessThan(1e-4);
  });

  /**
   * Two pairs, rows [chosen, rejected, chosen, rejected] (the batch's pairs); the reference is the model's own
   * log-probs plus noise, so every log-ratio is nonzero.
   */
  function preferenceBatch(settings: DpoSettings) {
    const batch = TrainingBatch.fromSequences(
      [...PROMPTS.slice(0, 2), ...PROMPTS.slice(0, 2)],
      [...RESPONSES.slice(0, 2), RESPONSES[2]!, [5, 5]],
    );
    const R = batch.responseLength;
    const view = batch.all();
    batch.oldLogProbs = new Float32Array(batch.rows * R);
    batch.refLogProbs = new Float32Array(batch.rows * R);
    batch.refLogProbs = tfjsLogProbs(model, view);
    const rng = new SeededRandom(23);
    batch.pairs = { chosen: Int32Array.from([0, 2]), rejected: Int32Array.from([1, 3]) };
    for (let i = 0; i < batch.rows * R; i++) {
      if (batch.responseMask[i] === 0) continue;
      batch.refLogProbs[i]! += (rng.uniform() * 2 - 1) * 0.7;
    }
    const loss = new DpoLossFunction(settings);
    const totals = lossTotals(view, { responseLength: R, microBatchSize: MICRO_BATCH });
    return { view, loss, totals };
  }
}

/**
 * The weights are the graph's inputs, so trainers of one architecture can share their sessions (a run's models, one
 * per agent): each gets exactly the gradients it gets alone, from one session, and the session outlives the first
 * trainer to let go.
 */
describe('onnx training sessions shared between trainers of one architecture', () => {
  it('two models on one session: bitwise the gradients each has on its own, one session, released by the last user', async () => {
    await selectRuntime('cpu');
    const json = tinyConfigJson('Qwen3ForCausalLM', { tie_word_embeddings: true });
    const first = randomWeights(json, 5);
    const second = randomWeights(json, 6);
    const model = DecoderModel.fromTensors(first.config, first.weights);
    const view = makeView(model, 9);
    model.dispose();
    const loss = LOSSES[0]!.loss;
    const totals = lossTotals(view, { responseLength: 7, microBatchSize: MICRO_BATCH });
    const gradientsOf = async (trainer: OnnxTrainer) => {
      const result = await trainer.gradients({ batch: view, totals, loss, microBatchSize: MICRO_BATCH });
      return { loss: result.loss, gradients: new Map([...result.gradients].map(([name, g]) => [name, Float32Array.from(g)])) };
    };
    const alone: Array<Awaited<ReturnType<typeof gradientsOf>>> = [];
    for (const { config, weights } of [first, second]) {
      const trainer = await OnnxTrainer.create(config, weights);
      alone.push(await gradientsOf(trainer));
      await trainer.release();
    }
    expect(alone[0]!.loss).not.toBe(alone[1]!.loss);

    const sessions = trainingSessionPool();
    const trainers = [
      await OnnxTrainer.create(first.config, first.weights, {}, { sessions }),
      await OnnxTrainer.create(second.config, second.weights, {}, { sessions }),
    ];
    const shared = [await gradientsOf(trainers[0]!), await gradientsOf(trainers[1]!)];
    expect(sessions.size).toBe(1);
    for (const i of [0, 1]) {
      expect(shared[i]!.loss).toBe(alone[i]!.loss);
      const unequal = [...shared[i]!.gradients].filter(([name, g]) => !g.every((v, j) => v === alone[i]!.gradients.get(name)![j]));
      expect(unequal.map(([name]) => name)).toEqual([]);
    }
    await trainers[0]!.release();
    expect(sessions.size).toBe(1);
    expect((await gradientsOf(trainers[1]!)).loss).toBe(alone[1]!.loss);
    await trainers[1]!.release();
    expect(sessions.size).toBe(0);
  });
});
