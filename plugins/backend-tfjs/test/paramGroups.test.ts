import * as tf from '@tensorflow/tfjs';
import { DrmasError, type ModelSettings, type RunContext } from '@drmas/core';
import { selectRuntime } from '../src/runtime/RuntimeSelector.js';
import { AdamW } from '../src/training/AdamW.js';
import { assignParamGroups, ParamGroupError } from '../src/training/paramGroups.js';
import { tfjsBackendFactory } from '../src/plugin/TfjsBackendPlugin.js';

beforeAll(async () => {
  await selectRuntime('wasm');
});

const NAMES = ['lm_head.weight', 'model.norm.weight', 'model.layers.0.input_layernorm.weight', 'model.layers.0.mlp.up_proj.weight'];

describe('param groups', () => {
  it('assign each parameter to the first group whose pattern matches it; * is a wildcard', () => {
    const groups = assignParamGroups(NAMES, [{ params: ['model.norm.weight'] }, { params: ['*norm*'] }]);
    expect([...groups]).toEqual([
      ['lm_head.weight', -1],
      ['model.norm.weight', 0],
      ['model.layers.0.input_layernorm.weight', 1],
      ['model.layers.0.mlp.up_proj.weight', -1],
    ]);
    expect([...assignParamGroups(NAMES)].every(([, g]) => g === -1)).toBe(true);
  });

  it('a pattern that matches nothing is an error naming the group and the nearest names', () => {
    let error: unknown;
    try {
      assignParamGroups(NAMES, [{ params: ['*norm*'] }, { params: ['model.nrm.weight'] }]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ParamGroupError);
    expect((error as ParamGroupError).group).toBe(1);
    expect((error as Error).message).toMatch(/"model\.nrm\.weight" matches no parameter.*did you mean "model\.norm\.weight"/);
    // Dots are literal, not regular-expression wildcards.
    expect(() => assignParamGroups(['model.norm.weight'], [{ params: ['model.norm.weigh.'] }])).toThrow(ParamGroupError);
  });

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
    optimizer.apply(weights, grads, 0.05, { lr: 0.1, weightDecay: 0.5, eps: 1e-8, paramGroups: [{ params: ['model.norm.*'], lr: 0.4, weightDecay: 0 }] });
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
    const weights = new Map([['model.norm.weight', tf.variable(tf.tensor1d([1]))], ['lm_head.weight', tf.variable(tf.tensor1d([1]))]]);
    const optimizer = new AdamW();
    const settings = { lr: 0.1, weightDecay: 0, paramGroups: [{ params: ['model.norm.weight'], betas: [0.5, 0.75] as [number, number], eps: 0.1 }] };
    const expected = [[0.92, 0.9], [0.962754, 0.92477]];
    for (const [step, g] of [0.4, -0.6].entries()) {
      const grads = new Map([...weights.keys()].map((name) => [name, tf.tensor1d([g])]));
      optimizer.apply(weights, grads, 0.1, settings);
      for (const t of grads.values()) t.dispose();
      expect(weights.get('model.norm.weight')!.dataSync()[0]).toBeCloseTo(expected[step][0], 5);
      expect(weights.get('lm_head.weight')!.dataSync()[0]).toBeCloseTo(expected[step][1], 5);
    }
    optimizer.dispose();
    for (const t of weights.values()) t.dispose();
  });

  it('the tfjs backend reports a misspelt parameter under models.<id>.optimizer.paramGroups.<i>.params', async () => {
    const settings = {
      backend: 'tfjs', model: 'tiny', runtime: 'wasm', seed: 0,
      optimizer: { lr: 1e-4, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0, warmupSteps: 0, schedule: 'constant', maxGradNorm: 1, paramGroups: [{ params: ['model.nrom.weight'], lr: 1e-2 }] },
    } as ModelSettings;
    const run = { log: () => {} } as unknown as RunContext;
    const error = await tfjsBackendFactory.create({ modelId: 'policy', settings, run }).then(() => undefined, (e: unknown) => e);
    expect(DrmasError.is(error)).toBe(true);
    expect(error).toMatchObject({ code: 'CONFIG_INVALID', key: 'models.policy.optimizer.paramGroups.0.params' });
    expect((error as Error).message).toMatch(/did you mean "model\.norm\.weight"/);
  });
});
