import * as tf from '@tensorflow/tfjs-core';
import { promptResponseLayout, type HostTensor } from '@drmas/models';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { selectRuntime } from '../src/runtime/RuntimeSelector.js';
import { PolicyTrainer } from '../src/training/PolicyTrainer.js';
import { responseTokenStats } from '../src/model/responseLogProbs.js';
import { rowsWithAdvantage } from '@drmas/core';
import { batchLogits, logSoftmax, randomModel, tinyConfigJson } from './modelFixtures.js';
import { makeBatch, updateRequest, weightedCrossEntropy } from './trainingFixtures.js';
import type { DecoderModel } from '../src/model/DecoderModel.js';

const PAIRS: [number[], number[]][] = [
  [
    [3, 7, 1, 9],
    [12, 5, 20, 2],
  ],
  [[8], [30, 4, 11]],
  [
    [14, 15, 16],
    [17, 18, 19, 20, 21],
  ],
];

beforeAll(async () => {
  await selectRuntime('wasm');
});

function lossOf(model: DecoderModel, advantages: number[]): number {
  const prompts = PAIRS.map(([p]) => p);
  const responses = PAIRS.map(([, r]) => r);
  return tf.tidy(() => {
    const layout = promptResponseLayout(prompts, responses);
    const { logProbs } = responseTokenStats(model, layout, false);
    const mask = tf.tensor2d(
      Float32Array.from(layout.targets, (_, i) =>
        i % layout.responseColumns < responses[Math.floor(i / layout.responseColumns)]!.length ? 1 : 0,
      ),
      logProbs.shape,
    );
    const adv = tf.tensor2d(
      advantages.flatMap((a) => new Array<number>(layout.responseColumns).fill(a)),
      logProbs.shape,
    );
    return -tf.sum(tf.mul(tf.mul(logProbs, adv), mask)).dataSync()[0]!;
  });
}

/**
 * Checks `grads` of the named weights against central finite differences of `f` with step `h`, on the two
 * largest-gradient entries of each tensor (small gradients would be dominated by rounding), within
 * `absolute + relative * |gradient|`.
 */
function expectFiniteDifferences(
  model: DecoderModel,
  grads: tf.NamedTensorMap,
  names: readonly string[],
  f: () => number,
  { h, absolute, relative }: { h: number; absolute: number; relative: number },
): void {
  for (const name of names) {
    const w = model.weights.get(name)!;
    const grad = grads[w.name];
    if (grad === undefined) throw new Error(`no gradient for ${name}`);
    const g = grad.dataSync();
    const original = w.dataSync().slice();
    const order = Array.from(g.keys())
      .sort((a, b) => Math.abs(g[b]!) - Math.abs(g[a]!))
      .slice(0, 2);
    for (const i of order) {
      const at = (delta: number) => {
        const data = original.slice();
        data[i] = data[i]! + delta;
        w.assign(tf.tensor(data, w.shape));
        return f();
      };
      const numeric = (at(h) - at(-h)) / (2 * h);
      w.assign(tf.tensor(original, w.shape));
      const analytic = g[i]!;
      expect(Math.abs(numeric - analytic)).toBeLessThan(absolute + relative * Math.abs(analytic));
    }
  }
}

describe('gradients', () => {
  it('match central finite differences on a tiny model (wasm: scatter-add embedding gradient)', () => {
    const model = randomModel(
      tinyConfigJson('Qwen3ForCausalLM', {
        hidden_size: 16,
        intermediate_size: 24,
        vocab_size: 32,
        head_dim: 8,
        num_attention_heads: 2,
        num_key_value_heads: 1,
        attention_bias: true,
        tie_word_embeddings: true,
      }),
      4,
    );
    const advantages = [1.0, -0.5, 0.7];
    const prompts = PAIRS.map(([p]) => p);
    const responses = PAIRS.map(([, r]) => r);
    const { grads } = tf.variableGrads(() => {
      const layout = promptResponseLayout(prompts, responses);
      const { logProbs } = responseTokenStats(model, layout, false, true);
      const maskData = new Float32Array(logProbs.size);
      const advData = new Float32Array(logProbs.size);
      responses.forEach((r, i) =>
        r.forEach((_, j) => ((maskData[i * layout.responseColumns + j] = 1), (advData[i * layout.responseColumns + j] = advantages[i]!))),
      );
      return tf.neg(
        tf.sum(tf.mul(tf.mul(logProbs, tf.tensor2d(advData, logProbs.shape)), tf.tensor2d(maskData, logProbs.shape))),
      ) as tf.Scalar;
    }, [...model.weights.values()]);
    const checked = [
      'model.embed_tokens.weight',
      'model.layers.0.self_attn.q_proj.weight',
      'model.layers.0.self_attn.k_proj.bias',
      'model.layers.0.self_attn.v_proj.weight',
      'model.layers.1.self_attn.q_norm.weight',
      'model.layers.1.self_attn.k_norm.weight',
      'model.layers.1.self_attn.o_proj.weight',
      'model.layers.0.mlp.gate_proj.weight',
      'model.layers.1.mlp.down_proj.weight',
      'model.layers.0.input_layernorm.weight',
      'model.norm.weight',
    ];
    // float32 losses of magnitude ~30 carry rounding errors ~1e-5; divided by 2h = 2e-2 that is ~5e-4 in the
    // difference quotient, and the truncation error h^2 f'''/6 is of similar size; hence 2e-3 + 3% relative.
    expectFiniteDifferences(model, grads, checked, () => lossOf(model, advantages), { h: 1e-2, absolute: 2e-3, relative: 0.03 });
    Object.values(grads).forEach((t) => t.dispose());
    model.dispose();
  });
});

/**
 * Token-mean softmax entropy of the response predictions of `PAIRS[rows]` at temperature `T`, from the model's
 * logits in float64.
 */
function plainEntropy(model: DecoderModel, T: number, rows = PAIRS.map((_, r) => r)): number {
  let sum = 0;
  let tokens = 0;
  for (const r of rows) {
    const [prompt, response] = PAIRS[r]!;
    const logits = batchLogits(model, [[...prompt, ...response]])[0]!;
    for (let j = 0; j < response.length; j++) {
      sum -= logSoftmax(logits[prompt.length - 1 + j]!.map((z) => z / T)).reduce((acc, lp) => acc + Math.exp(lp) * lp, 0);
      tokens++;
    }
  }
  return sum / tokens;
}

describe('entropy gradients', () => {
  it.each([1, 0.6])(
    'the token-mean entropy at temperature %p differentiates like central finite differences of plain-JS softmax entropy',
    (T) => {
      const model = randomModel(
        tinyConfigJson('Qwen2ForCausalLM', {
          hidden_size: 16,
          intermediate_size: 24,
          vocab_size: 32,
          head_dim: 8,
          num_attention_heads: 2,
          num_key_value_heads: 1,
        }),
        9,
      );
      const prompts = PAIRS.map(([p]) => p);
      const responses = PAIRS.map(([, r]) => r);
      const tokens = responses.reduce((n, r) => n + r.length, 0);
      const { value, grads } = tf.variableGrads(() => {
        const layout = promptResponseLayout(prompts, responses);
        const { entropy } = responseTokenStats(model, layout, true, true, new Array(PAIRS.length).fill(T));
        const mask = new Float32Array(entropy!.size);
        responses.forEach((r, i) => r.forEach((_, j) => (mask[i * layout.responseColumns + j] = 1)));
        return tf.div<tf.Scalar>(tf.sum(tf.mul(entropy!, tf.tensor2d(mask, entropy!.shape))), tokens);
      }, [...model.weights.values()]);
      expect(value.dataSync()[0]).toBeCloseTo(plainEntropy(model, T), 4);
      // An O(1) entropy from float32 logits (softmax in float64) rounds at ~1e-7, so h = 1e-3 keeps both errors small.
      const checked = ['model.norm.weight', 'lm_head.weight', 'model.layers.1.mlp.down_proj.weight', 'model.embed_tokens.weight'];
      expectFiniteDifferences(model, grads, checked, () => plainEntropy(model, T), { h: 1e-3, absolute: 1e-3, relative: 0.02 });
      value.dispose();
      Object.values(grads).forEach((t) => t.dispose());
      model.dispose();
    },
  );
});

describe('PolicyTrainer on wasm', () => {
  it('memorizes a sequence: cross-entropy falls by more than half in 20 AdamW steps, no tensor leak', async () => {
    const model = randomModel(tinyConfigJson('Qwen2ForCausalLM'), 12);
    const trainer = new PolicyTrainer(model);
    const batch = makeBatch([
      [
        [1, 2, 3],
        [10, 20, 30, 40, 5, 6, 7, 8],
      ],
    ]);
    const losses: number[] = [];
    let tensorsAfterFirst = 0;
    for (let i = 0; i < 20; i++) {
      const result = await trainer.update(
        updateRequest(batch, weightedCrossEntropy, 1, { optimizer: { lr: 1e-2, weightDecay: 0, maxGradNorm: 1 } }),
      );
      losses.push(result.loss);
      expect(result.skipped).toBe(false);
      if (i === 0) tensorsAfterFirst = tf.memory().numTensors;
    }
    expect(tf.memory().numTensors).toBe(tensorsAfterFirst);
    expect(losses[19]).toBeLessThan(0.5 * losses[0]!);
    trainer.dispose();
    model.dispose();
  });

  it('micro-batches accumulate to the full-batch gradient', async () => {
    const a = randomModel(tinyConfigJson('LlamaForCausalLM'), 3);
    const b = randomModel(tinyConfigJson('LlamaForCausalLM'), 3);
    const batch = makeBatch(PAIRS, [1, -0.5, 0.25]);
    const settings = { lr: 1e-3, maxGradNorm: 0 };
    const full = await new PolicyTrainer(a).update(updateRequest(batch, weightedCrossEntropy, 3, { optimizer: settings }));
    const micro = await new PolicyTrainer(b).update(updateRequest(batch, weightedCrossEntropy, 1, { optimizer: settings }));
    expect(micro.loss).toBeCloseTo(full.loss, 5);
    expect(micro.gradNorm).toBeCloseTo(full.gradNorm, 4);
    expect(micro.metrics['actor/mean_logprob']).toBeCloseTo(full.metrics['actor/mean_logprob']!, 5);
    const wa = await a.exportTensors();
    const wb = await b.exportTensors();
    for (const [name, t] of wa) {
      const u = wb.get(name)!.data;
      t.data.forEach((x, i) => expect(Math.abs(x - u[i]!)).toBeLessThan(1e-5));
    }
    a.dispose();
    b.dispose();
  });

  it('computing only the rows with advantage, normalized by the whole mini-batch, gives the update of computing them all', async () => {
    const a = randomModel(tinyConfigJson('Qwen2ForCausalLM'), 5);
    const b = randomModel(tinyConfigJson('Qwen2ForCausalLM'), 5);
    const optimizer = { lr: 1e-3, maxGradNorm: 0.5 };
    const ta = new PolicyTrainer(a);
    const tb = new PolicyTrainer(b);
    // The second batch has no advantage at all: AdamW still steps on its momentum, as with zero gradients.
    for (const advantages of [
      [1, 0, -0.5],
      [0, 0, 0],
    ]) {
      const batch = makeBatch(PAIRS, advantages);
      const learning = rowsWithAdvantage(batch);
      expect(learning.rows.length).toBe(advantages.filter((x) => x !== 0).length);
      const skipping = await ta.update(updateRequest(learning, weightedCrossEntropy, 1, { optimizer, normalizeBy: batch }));
      const computing = await tb.update(updateRequest(batch, weightedCrossEntropy, 1, { optimizer }));
      expect(skipping.loss).toBeCloseTo(computing.loss, 6);
      expect(skipping.gradNorm).toBeCloseTo(computing.gradNorm, 5);
    }
    expect(ta.optimizer.step).toBe(2);
    const wa = await a.exportTensors();
    const wb = await b.exportTensors();
    for (const [name, t] of wa) {
      const u = wb.get(name)!.data;
      t.data.forEach((x, i) => expect(Math.abs(x - u[i]!)).toBeLessThan(1e-6));
    }
    ta.dispose();
    tb.dispose();
    a.dispose();
    b.dispose();
  });

  it('reports the entropy of the trained rows from the update itself, matching softmax entropy of the logits', async () => {
    const model = randomModel(tinyConfigJson('Qwen2ForCausalLM'), 7);
    // Token-mean over the rows with advantage (0 and 2).
    const expected = plainEntropy(model, 1, [0, 2]);
    const trainer = new PolicyTrainer(model);
    const batch = makeBatch(PAIRS, [1, 0, -0.5]);
    const learning = rowsWithAdvantage(batch);
    const result = await trainer.update(
      updateRequest(learning, weightedCrossEntropy, 1, { optimizer: { lr: 1e-3 }, entropyMetric: true, normalizeBy: batch }),
    );
    expect(result.metrics['actor/entropy']).toBeCloseTo(expected, 4);
    const without = await trainer.update(updateRequest(learning, weightedCrossEntropy, 1, { optimizer: { lr: 1e-3 }, normalizeBy: batch }));
    expect(without.metrics['actor/entropy']).toBeUndefined();
    trainer.dispose();
    model.dispose();
  });

  it('skips a step with a non-finite gradient norm, leaving weights and optimizer untouched', async () => {
    const model = randomModel(tinyConfigJson('Qwen2ForCausalLM'), 6);
    const trainer = new PolicyTrainer(model);
    await trainer.update(updateRequest(makeBatch(PAIRS), weightedCrossEntropy, 2, { optimizer: { lr: 1e-3 } }));
    const before = await model.exportTensors();
    const bad = makeBatch(PAIRS, [1, NaN, 1]);
    const result = await trainer.update(updateRequest(bad, weightedCrossEntropy, 2, { optimizer: { lr: 1e-3 } }));
    expect(result.skipped).toBe(true);
    expect(result.metrics['actor/skipped_nonfinite']).toBe(1);
    expect(trainer.optimizer.step).toBe(1);
    const after = await model.exportTensors();
    for (const [name, t] of before) expect(after.get(name)!.data).toEqual(t.data);
    trainer.dispose();
    model.dispose();
  });

  it('optimizer state saves and loads: the next update is identical', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drmas-opt-'));
    const a = randomModel(tinyConfigJson('Qwen3ForCausalLM'), 8);
    const b = randomModel(tinyConfigJson('Qwen3ForCausalLM'), 99);
    const train = (trainer: PolicyTrainer, lrScale: number) =>
      trainer.update(updateRequest(batch, weightedCrossEntropy, 3, { optimizer: { lr: 5e-3 }, lrScale }));
    const ta = new PolicyTrainer(a);
    const batch = makeBatch(PAIRS, [1, -1, 0.5]);
    for (let i = 0; i < 3; i++) await train(ta, (i + 1) / 4);
    const { saveDecoderModel, loadDecoderModel } = await import('../src/model/modelCheckpoint.js');
    await saveDecoderModel(dir, a, { extraFiles: await ta.optimizer.serialize(ta.settings) });
    b.assignTensors(
      (await loadDecoderModel(dir)).model.weights.size
        ? await (await loadDecoderModel(dir)).model.exportTensors()
        : new Map<string, HostTensor>(),
    );
    const tb = new PolicyTrainer(b);
    await tb.optimizer.load(dir, b.weights);
    expect(tb.optimizer.step).toBe(3);
    const ra = await train(ta, 0.75);
    const rb = await train(tb, 0.75);
    expect(rb.loss).toBe(ra.loss);
    expect(rb.learningRate).toBe(5e-3 * 0.75);
    const wa = await a.exportTensors();
    const wb = await b.exportTensors();
    for (const [name, t] of wa) expect(wb.get(name)!.data).toEqual(t.data);
    ta.dispose();
    tb.dispose();
    a.dispose();
    b.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
});
