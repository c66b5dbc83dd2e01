import { beforeAll, describe, expect, test } from '@jest/globals';
import * as tf from '@tensorflow/tfjs-core';
import { lossTotalsInput } from '@drmas/core';
import { lossSettings, PolicyLossFunction, type AlgorithmSettings } from '@drmas/plugin-algorithms';
import { selectRuntime } from '../src/runtime/RuntimeSelector.js';
import { tfjsTensorOps } from '../src/training/TfjsTensorOps.js';

/**
 * GSPO's training loss (`algorithm.loss.variant: gspo`) as tfjs differentiates it, against its gradient worked by
 * hand in float64. veRL's GSPO-token: every token's ratio has its row's value s_i = exp(min(mean_t(logp - old), 10)),
 * and d s_{i,t} / d logp_{i,t} = s_i (the sequence part is detached). With seq-mean-token-mean over R rows, a trained
 * token's gradient is -A_{i,t} s_i / (n_i R), or 0 where the clip holds it (A > 0 and s_i > 1 + high, or A < 0 and
 * s_i < 1 - low) or the cap at e^10 does. Its value equals veRL's on reference cases (algorithms' reference.test.ts);
 * the gradient is not the gradient of that value (finite differences of the value would not find it), hence the
 * closed form.
 */

const LOW = 0.2;
const HIGH = 0.28;
// Rows: mean log-ratio 0.1 (inside the clip), 0.5 (above 1 + high: positive advantages clipped, negative not),
// -0.6 (below 1 - low: negative clipped), 11 (past the cap), and a row with no trained token.
const OLD = [
  [-1.0, -0.8, -1.2, -0.5],
  [-2.0, -0.3, -1.1, -0.9],
  [-0.4, -1.6, -0.7, -1.0],
  [-12.0, -13.0, -0.5, -0.5],
  [-0.2, -0.9, -1.0, -1.0],
];
const SHIFT = [
  [0.3, -0.1, 0.1, 5],
  [0.8, 0.2, 0.5, -3],
  [-0.6, -0.9, -0.3, -0.6],
  [11, 11, 0.2, 0.2],
  [0.4, 0.4, 0.4, 0.4],
];
const ADVANTAGES = [
  [1.5, -0.5, 0.7, 2],
  [1.2, -0.8, 0.3, -1],
  [0.9, -1.3, 0.6, 4],
  [-2.0, 1.0, 3, 3],
  [1, 1, 1, 1],
];
const MASK = [
  [1, 1, 1, 0],
  [1, 1, 1, 0],
  [1, 1, 1, 1],
  [1, 1, 0, 0],
  [0, 0, 0, 0],
];
const LOGP = OLD.map((row, i) => row.map((x, t) => x + SHIFT[i]![t]!));

/** The hand-worked gradient of the mini-batch loss with respect to every log-prob. */
function expectedGradient(): number[][] {
  const rows = MASK.filter((row) => row.some((m) => m > 0)).length;
  return MASK.map((row, i) => {
    const n = row.reduce((a, b) => a + b, 0);
    if (n === 0) return row.map(() => 0);
    const meanShift = row.reduce((s, m, t) => s + m * (LOGP[i]![t]! - OLD[i]![t]!), 0) / n;
    const capped = meanShift > 10;
    const s = Math.exp(Math.min(meanShift, 10));
    return row.map((m, t) => {
      const a = ADVANTAGES[i]![t]!;
      const held = (a > 0 && s > 1 + HIGH) || (a < 0 && s < 1 - LOW) || capped;
      return m === 0 || held ? 0 : (-a * s) / (n + 1e-8) / rows;
    });
  });
}

/** tfjs's loss and gradient over `rows` (one micro-batch), normalized by the whole mini-batch's totals. */
function tfjsRun(rows: number[]): { loss: number; grad: number[][] } {
  const loss = new PolicyLossFunction(
    lossSettings({
      loss: { variant: 'gspo', clipRatio: 0.2, clipRatioLow: LOW, clipRatioHigh: HIGH, clipRatioC: 3, klCoef: 0, entropyCoef: 0 },
    } as AlgorithmSettings),
  );
  expect(loss.settings.aggregation).toBe('seq-mean-token-mean');
  const totals = { tokens: MASK.flat().reduce((a, b) => a + b, 0), rows: 4, responseLength: 4, microBatches: 1 };
  const pick = (m: number[][]) => tf.tensor2d(rows.map((r) => m[r]!));
  const { value, grads } = tf.valueAndGrads(
    (logProbs: tf.Tensor) =>
      loss.compute(tfjsTensorOps, {
        logProbs,
        oldLogProbs: pick(OLD),
        advantages: pick(ADVANTAGES),
        responseMask: pick(MASK),
        totals: lossTotalsInput(tfjsTensorOps, totals),
      }).loss as tf.Scalar,
  )([pick(LOGP)]);
  return { loss: value.dataSync()[0]!, grad: grads[0]!.arraySync() as number[][] };
}

describe('GSPO (GSPO-token, veRL) on tfjs: the gradient against its closed form', () => {
  beforeAll(async () => {
    await selectRuntime('wasm');
  });

  test('every token: inside the clip -A s / (n R), 0 where the clip or the cap at e^10 holds it, 0 off the mask', () => {
    const expected = expectedGradient();
    // The cases the rows were built for: some tokens clipped, some not, the capped row all zero.
    expect(expected[1]!.filter((g) => g !== 0)).toHaveLength(1);
    expect(expected[2]!.filter((g) => g !== 0)).toHaveLength(3);
    expect(expected[3]).toEqual([0, 0, 0, 0]);
    const { grad } = tfjsRun([0, 1, 2, 3, 4]);
    for (let i = 0; i < expected.length; i++)
      for (let t = 0; t < 4; t++) expect(Math.abs(grad[i]![t]! - expected[i]![t]!)).toBeLessThan(1e-6 * (1 + Math.abs(expected[i]![t]!)));
  });

  test('micro-batches of one row add up to the whole batch, loss and gradient', () => {
    const whole = tfjsRun([0, 1, 2, 3, 4]);
    const parts = [0, 1, 2, 3, 4].map((r) => tfjsRun([r]));
    // The capped row's loss is about e^10: compare relative to the loss's size.
    expect(Math.abs(parts.reduce((s, p) => s + p.loss, 0) - whole.loss)).toBeLessThan(1e-6 * Math.abs(whole.loss));
    parts.forEach((p, r) => p.grad[0]!.forEach((g, t) => expect(g).toBeCloseTo(whole.grad[r]![t]!, 7)));
  });
});
