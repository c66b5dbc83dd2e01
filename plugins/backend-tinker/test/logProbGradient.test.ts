import { describe, expect, it } from '@jest/globals';
import { policyLoss } from '../../backend-onnx/test/parityFixtures.js';
import { logProbGradient, type TokenColumns } from '../src/training/logProbGradient.js';

/**
 * The per-token weights the tinker backend sends (`-dLoss/dlogp`), against derivatives worked by hand on one row of
 * three tokens: old log-probs [-1, -2, -0.5], advantages [1, -2, 0.5], every token trained (token-mean divides by 3).
 */

const loss = policyLoss;

const OLD = [-1, -2, -0.5];
const ADVANTAGES = [1, -2, 0.5];
const TOTALS = { tokens: 3, rows: 1, responseLength: 3, microBatches: 1 };

function columns(logProbs: number[], refLogProbs?: number[]): TokenColumns {
  return {
    rows: 1,
    columns: 3,
    logProbs: Float32Array.from(logProbs),
    oldLogProbs: Float32Array.from(OLD),
    lossColumns: { advantages: Float32Array.from(ADVANTAGES) },
    responseMask: Float32Array.from([1, 1, 1]),
    refLogProbs: refLogProbs && Float32Array.from(refLogProbs),
  };
}

const weights = (gradient: Float32Array) => Array.from(gradient, (g) => -g);

describe('the weighted cross-entropy weights -dLoss/dlogp', () => {
  it('are A_t / 3 for PPO-clip at ratio 1 with token-mean (loss -A·r, dr/dlogp = r = 1)', async () => {
    const result = await logProbGradient(loss(), columns(OLD), TOTALS);
    const expected = [1 / 3, -2 / 3, 0.5 / 3];
    weights(result.gradient).forEach((w, t) => expect(w).toBeCloseTo(expected[t]!, 6));
    // The loss itself: mean of -A·r = -(1 - 2 + 0.5) / 3.
    expect(result.loss).toBeCloseTo(0.5 / 3, 6);
  });

  it('are 0 on a token whose ratio is clipped (r = 1.5 > 1.28 with A > 0: the loss is the constant -A·1.28 there)', async () => {
    const logProbs = [-1 + Math.log(1.5), -2, -0.5];
    const result = await logProbGradient(loss(), columns(logProbs), TOTALS);
    const expected = [0, -2 / 3, 0.5 / 3];
    weights(result.gradient).forEach((w, t) => expect(w).toBeCloseTo(expected[t]!, 6));
    expect(result.metrics.pg_clipfrac).toBeCloseTo(1 / 3, 6);
  });

  it('add -klCoef/3 per token for the k1 KL term (d(logp - ref)/dlogp = 1)', async () => {
    const result = await logProbGradient(loss({ klCoef: 0.1, klType: 'k1' }), columns(OLD, [-1.5, -2, -0.2]), TOTALS);
    const expected = [1 / 3 - 0.1 / 3, -2 / 3 - 0.1 / 3, 0.5 / 3 - 0.1 / 3];
    weights(result.gradient).forEach((w, t) => expect(w).toBeCloseTo(expected[t]!, 6));
  });

  it('scale by 1/responseLength under seq-mean-token-sum-norm (the loss sums the tokens and divides by the longest response, 4)', async () => {
    const totals = { ...TOTALS, responseLength: 4 };
    const result = await logProbGradient(loss({ aggregation: 'seq-mean-token-sum-norm' }), columns(OLD), totals);
    const expected = ADVANTAGES.map((a) => a / 4);
    weights(result.gradient).forEach((w, t) => expect(w).toBeCloseTo(expected[t]!, 6));
  });

  it('refuse a loss with an entropy term, naming the setting', async () => {
    await expect(logProbGradient(loss({ entropyCoef: 0.01 }), columns(OLD), TOTALS)).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      key: 'algorithm.loss.entropyCoef',
    });
  });
});
