import { describe, expect, test } from '@jest/globals';
import { hostTensorOps, lossTotalsInput } from '@drmas/core';
import { DpoLossFunction, type DpoSettings } from '../src/index.js';
import { arr } from './hostRows.js';

// Two pairs as rows [chosen 1, rejected 1, chosen 2, rejected 2], three response columns.
//   pair 1: chosen logps -1, -2 (2 tokens) sum -3, ref -1.5, -2 sum -3.5 -> chosen log-ratio +0.5
//           rejected -1, -1, -1 sum -3, ref -1, -1, -0.5 sum -2.5 -> rejected log-ratio -0.5; h = 1
//   pair 2: chosen -2, -1, -1 sum -4, ref -1 x3 sum -3 -> -1; rejected -0.5 (1 token), ref -1 -> +0.5; h = -1.5
// With beta 0.5: beta*h = 0.5 and -0.75.
const logProbs = [
  [-1, -2, -9],
  [-1, -1, -1],
  [-2, -1, -1],
  [-0.5, -9, -9],
];
const refLogProbs = [
  [-1.5, -2, -9],
  [-1, -1, -0.5],
  [-1, -1, -1],
  [-1, -9, -9],
];
const responseMask = [
  [1, 1, 0],
  [1, 1, 1],
  [1, 1, 1],
  [1, 0, 0],
];
// The preference column: +1 on every token of a chosen row, -1 on a rejected one's (as trainedColumns cuts it from pairs).
const preference = responseMask.map((row, r) => row.map(() => (r % 2 === 0 ? 1 : -1)));
const totals = { tokens: 9, rows: 4, responseLength: 3, microBatches: 1 };

function run(settings: DpoSettings, rows = [0, 1, 2, 3], t = totals) {
  const pick = (m: number[][]) => arr(rows.map((r) => m[r]!));
  const out = new DpoLossFunction(settings).compute(hostTensorOps, {
    logProbs: pick(logProbs),
    oldLogProbs: pick(logProbs),
    preference: pick(preference),
    responseMask: pick(responseMask),
    refLogProbs: pick(refLogProbs),
    totals: lossTotalsInput(hostTensorOps, t),
  });
  return { loss: out.loss.data[0]!, metrics: Object.fromEntries(Object.entries(out.metrics).map(([k, v]) => [k, v.data[0]!])) };
}

// softplus(x) = log(1 + e^x): softplus(-0.5) = 0.474076984, softplus(0.75) = 1.136871006.
const SP_MINUS_HALF = Math.log1p(Math.exp(-0.5));
const SP_THREE_QUARTERS = Math.log1p(Math.exp(0.75));

describe('DpoLossFunction (hand-worked)', () => {
  test('sigmoid: the mean of -log sigmoid(beta h) over pairs, and TRL metrics', () => {
    const { loss, metrics } = run({ variant: 'sigmoid', beta: 0.5 });
    expect(SP_MINUS_HALF).toBeCloseTo(0.474076984, 8);
    expect(SP_THREE_QUARTERS).toBeCloseTo(1.136871006, 8);
    expect(loss).toBeCloseTo((0.474076984 + 1.136871006) / 2, 8);
    // rewards beta * log-ratio: chosen 0.25 and -0.5, rejected -0.25 and 0.25
    expect(metrics['rewards/chosen']).toBeCloseTo(-0.125, 12);
    expect(metrics['rewards/rejected']).toBeCloseTo(0, 12);
    expect(metrics['rewards/accuracies']).toBeCloseTo(0.5, 12);
    expect(metrics['rewards/margins']).toBeCloseTo(-0.125, 12);
    expect(metrics['logps/chosen']).toBeCloseTo(-3.5, 12);
    expect(metrics['logps/rejected']).toBeCloseTo(-1.75, 12);
  });

  test('sigmoid with label smoothing (cDPO): (1-e) softplus(-x) + e softplus(x) = softplus(-x) + e x', () => {
    // mean over pairs of x = beta h: (0.5 - 0.75) / 2 = -0.125; 0.805473995 + 0.1 * -0.125
    expect(run({ variant: 'sigmoid', beta: 0.5, labelSmoothing: 0.1 }).loss).toBeCloseTo(0.805473995 - 0.0125, 8);
  });

  test('robust: ((1-e) softplus(-x) - e softplus(x)) / (1 - 2e)', () => {
    // pair 1: (0.9 * 0.474076984 - 0.1 * softplus(0.5) = 0.974076984) / 0.8 = 0.411576984
    // pair 2: (0.9 * 1.136871006 - 0.1 * softplus(-0.75) = 0.386871006) / 0.8 = 1.230621006
    expect(run({ variant: 'robust', beta: 0.5, labelSmoothing: 0.1 }).loss).toBeCloseTo((0.411576984 + 1.230621006) / 2, 8);
    // with e = 0 it is the sigmoid loss
    expect(run({ variant: 'robust', beta: 0.5 }).loss).toBeCloseTo(run({ variant: 'sigmoid', beta: 0.5 }).loss, 12);
  });

  test('hinge: max(0, 1 - beta h)', () => {
    // (max(0, 0.5) + max(0, 1.75)) / 2
    expect(run({ variant: 'hinge', beta: 0.5 }).loss).toBeCloseTo(1.125, 12);
  });

  test('ipo: (log-ratios per token, chosen minus rejected, - 1/(2 beta))^2', () => {
    // pair 1: 0.5/2 - (-0.5/3) = 0.416667, - 1 -> 0.340278; pair 2: -1/3 - 0.5/1 = -0.833333, - 1 -> 3.361111
    expect(run({ variant: 'ipo', beta: 0.5 }).loss).toBeCloseTo((0.34027778 + 3.36111111) / 2, 7);
  });

  test('micro-batches of whole pairs add up to the mini-batch; the order within a pair does not matter', () => {
    const whole = run({ variant: 'sigmoid', beta: 0.5 });
    const split = [run({ variant: 'sigmoid', beta: 0.5 }, [0, 1]), run({ variant: 'sigmoid', beta: 0.5 }, [2, 3])];
    expect(split[0]!.loss + split[1]!.loss).toBeCloseTo(whole.loss, 12);
    expect(split[0]!.metrics['rewards/accuracies']! + split[1]!.metrics['rewards/accuracies']!).toBeCloseTo(0.5, 12);
    expect(run({ variant: 'sigmoid', beta: 0.5 }, [1, 0, 3, 2]).loss).toBeCloseTo(whole.loss, 12);
  });

  test('settings out of range name their key', () => {
    expect(() => new DpoLossFunction({ variant: 'sigmoid', beta: 0 })).toThrow('dpo.beta: must be above 0');
    expect(() => new DpoLossFunction({ variant: 'robust', beta: 0.1, labelSmoothing: 0.5 })).toThrow(
      'dpo.labelSmoothing: must be in [0, 0.5)',
    );
    expect(() => new DpoLossFunction({ variant: 'kto' as 'ipo', beta: 0.1 })).toThrow(
      'dpo.variant: must be one of sigmoid, robust, hinge, ipo',
    );
  });
});
