import { describe, expect, test } from '@jest/globals';
import { TrainingBatch } from '@drmas/core';
import { ADVANTAGE_ESTIMATORS, BatchEstimator } from '../src/index.js';

describe('gae on critic values in the batch (veRL compute_gae_advantage_return)', () => {
  test('one multi-turn sequence: observation tokens are skipped, the chain carries across them', () => {
    // A veRL multi-turn row: turn 1 (3 tokens, a shaped reward 0.5 on its last), 2 observation tokens (mask 0, their
    // values 7 and -7 must not matter to the advantages), turn 2 (2 tokens, the outcome 1 on its last). gamma 0.9, lam 0.8.
    // Backwards, a_t = delta_t + 0.72 a_next with delta_t = r_t + 0.9 V_next - V_t over unmasked tokens:
    //   t6: 1 - 0.6 = 0.4                      t5: 0.9*0.6 - 0.4 + 0.72*0.4 = 0.428
    //   t4, t3 (observation): carry 0.428, V_next stays 0.4
    //   t2: 0.5 + 0.9*0.4 - 0.1 + 0.72*0.428 = 1.06816
    //   t1: 0.9*0.1 - 0.3 + 0.72*1.06816 = 0.5590752          t0: 0.9*0.3 - 0.2 + 0.72*0.5590752 = 0.472534144
    // returns = a + V (an observation token's return is the carried a plus its own value, as in veRL).
    const batch = TrainingBatch.fromSequences([[1, 2]], [[10, 11, 12, 13, 14, 15, 16]]);
    batch.responseMask.set([1, 1, 1, 0, 0, 1, 1]);
    batch.tokenRewards.set([0, 0, 0.5, 0, 0, 0, 1]);
    batch.values = Float64Array.from([0.2, 0.3, 0.1, 7, -7, 0.4, 0.6]);
    new BatchEstimator(ADVANTAGE_ESTIMATORS.gae, () => ({ gamma: 0.9, lam: 0.8 })).estimate(batch);
    const raw = [0.472534144, 0.5590752, 1.06816, 0.428, 0.428, 0.428, 0.4];
    const expectedReturns = raw.map((a, t) => a + batch.values![t]!);
    Array.from(batch.returns).forEach((value, t) => expect(value).toBeCloseTo(expectedReturns[t]!, 12));
    // Whitened over the 5 unmasked tokens (unbiased variance), every token shifted and scaled alike.
    const kept = raw.filter((_, t) => batch.responseMask[t] === 1);
    const mean = kept.reduce((s, a) => s + a, 0) / kept.length;
    const std = Math.sqrt(kept.reduce((s, a) => s + (a - mean) ** 2, 0) / (kept.length - 1) + 1e-8);
    Array.from(batch.advantages).forEach((value, t) => expect(value).toBeCloseTo((raw[t]! - mean) / std, 6));
  });

  test('two turns packed as two rows are two chains: no value crosses rows', () => {
    const batch = TrainingBatch.fromSequences(
      [[1], [2]],
      [
        [10, 11],
        [12, 13],
      ],
    );
    batch.tokenRewards.set([0, 1, 0, 1]);
    batch.values = Float64Array.from([0.5, 0.25, 0.1, 0.3]);
    new BatchEstimator(ADVANTAGE_ESTIMATORS.gae, () => ({ gamma: 1, lam: 1 })).estimate(batch);
    // gamma = lam = 1: each row's return at every token is its own reward sum from there on: 1 and 1.
    Array.from(batch.returns).forEach((value) => expect(value).toBeCloseTo(1, 12));
  });
});
