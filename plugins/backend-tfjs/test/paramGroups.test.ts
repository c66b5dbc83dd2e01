import * as tf from '@tensorflow/tfjs-core';
import { selectRuntime } from '../src/runtime/RuntimeSelector.js';
import { AdamW } from '../src/training/AdamW.js';
import { OPTIMIZER } from './trainingFixtures.js';

beforeAll(async () => {
  await selectRuntime('wasm');
});

describe('AdamW with param groups', () => {
  it('AdamW steps a grouped parameter with its own learning rate and weight decay, scaled by the schedule', () => {
    // First AdamW step, hand-worked: m_hat = g, v_hat = g^2, so w <- w * (1 - lr * wd) - lr * g / (|g| + eps).
    const weights = new Map([
      ['model.norm.weight', tf.variable(tf.tensor1d([1, 2]))],
      ['model.layers.0.mlp.up_proj.weight', tf.variable(tf.tensor1d([1, 2]))],
    ]);
    const grads = new Map([
      ['model.norm.weight', tf.tensor1d([0.5, -0.25])],
      ['model.layers.0.mlp.up_proj.weight', tf.tensor1d([0.5, -0.25])],
    ]);
    const optimizer = new AdamW();
    // The schedule is at half the model's lr (0.05 of 0.1), so the group's lr 0.4 is applied as 0.2.
    optimizer.apply(
      weights,
      grads,
      { ...OPTIMIZER, lr: 0.1, weightDecay: 0.5, eps: 1e-8, paramGroups: [{ params: ['model.norm.*'], lr: 0.4, weightDecay: 0 }] },
      0.5,
    );
    const norm = Array.from(weights.get('model.norm.weight')!.dataSync());
    const mlp = Array.from(weights.get('model.layers.0.mlp.up_proj.weight')!.dataSync());
    expect(norm[0]).toBeCloseTo(1 - 0.2, 6);
    expect(norm[1]).toBeCloseTo(2 + 0.2, 6);
    expect(mlp[0]).toBeCloseTo(1 * (1 - 0.05 * 0.5) - 0.05, 6);
    expect(mlp[1]).toBeCloseTo(2 * (1 - 0.05 * 0.5) + 0.05, 6);
    optimizer.dispose();
    for (const t of [...weights.values(), ...grads.values()]) t.dispose();
  });

  it('AdamW gives a grouped parameter its own betas and eps (bias corrections follow the group betas)', () => {
    // Gradients 0.4 then -0.6, lr 0.1, no decay. Group betas (0.5, 0.75), eps 0.1:
    //   step 1: m = 0.2, v = 0.04, m_hat = 0.4, sqrt(v_hat) = 0.4, w = 1 - 0.1 * 0.4 / 0.5 = 0.92
    //   step 2: m = -0.2, v = 0.12, m_hat = -0.26667, sqrt(v_hat) = 0.52372, w = 0.92 + 0.1 * 0.26667 / 0.62372 = 0.962754
    // Defaults (0.9, 0.999), eps 1e-8: step 1 moves by lr (w = 0.9); step 2: m_hat = -0.12632, sqrt(v_hat) = 0.50995,
    //   w = 0.9 + 0.1 * 0.12632 / 0.50995 = 0.924770.
    const weights = new Map([
      ['model.norm.weight', tf.variable(tf.tensor1d([1]))],
      ['lm_head.weight', tf.variable(tf.tensor1d([1]))],
    ]);
    const optimizer = new AdamW();
    const settings = {
      ...OPTIMIZER,
      lr: 0.1,
      weightDecay: 0,
      paramGroups: [{ params: ['model.norm.weight'], betas: [0.5, 0.75] as [number, number], eps: 0.1 }],
    };
    const expected = [
      [0.92, 0.9],
      [0.962754, 0.92477],
    ];
    for (const [step, g] of [0.4, -0.6].entries()) {
      const grads = new Map([...weights.keys()].map((name) => [name, tf.tensor1d([g])]));
      optimizer.apply(weights, grads, settings, 1);
      for (const t of grads.values()) t.dispose();
      expect(weights.get('model.norm.weight')!.dataSync()[0]).toBeCloseTo(expected[step]![0]!, 5);
      expect(weights.get('lm_head.weight')!.dataSync()[0]).toBeCloseTo(expected[step]![1]!, 5);
    }
    optimizer.dispose();
    for (const t of weights.values()) t.dispose();
  });
});
