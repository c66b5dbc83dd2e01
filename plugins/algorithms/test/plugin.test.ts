import { describe, expect, test } from '@jest/globals';
import {
  BATCH_INPUTS,
  BatchInputSource,
  createKernel,
  trainedColumns,
  hostTensorOps,
  LossFunction,
  lossTotalsInput,
  type BatchInput,
  type Plugin,
  type RolloutBatch,
} from '@drmas/core';
import algorithmsPlugin, { PolicyLossFunction } from '../src/index.js';
import { aggregateLoss } from './reference/aggregateLoss.js';
import { klPenalty } from './reference/klPenalty.js';
import { policyLoss } from './reference/policyLoss.js';
import { advantagesOf, producer, runStep, trajectory } from './kernelStep.js';
import { arr } from './hostRows.js';

// Two rollouts of one prompt; solver rewards 1 and 0, verifier rewards 1 and 1.
const twoAgents: RolloutBatch = {
  metrics: {},
  trajectories: [trajectory('g', 't0', { solver: 1, verifier: 1 }, 1), trajectory('g', 't1', { solver: 0, verifier: 1 }, 0)],
};

describe('the advantage hook with algorithm.advantage', () => {
  test('drmas normalizes each agent by its own statistics (hand-worked)', async () => {
    const { batch, metrics } = await runStep('drmas', [twoAgents]);
    // Rows in trajectory order: t0 solver, t0 verifier, t1 solver, t1 verifier.
    // solver: mean 0.5, unbiased std sqrt(0.5) = 0.70710678; A = +-0.5 / (0.70710678 + 1e-6) = +-0.70710578
    expect(advantagesOf(batch, 0)[0]).toBeCloseTo(0.70710578, 7);
    expect(advantagesOf(batch, 2)[2]).toBeCloseTo(-0.70710578, 7);
    // verifier: both 1, std 0: A = 0 / (0 + 1e-6) = 0
    expect(advantagesOf(batch, 1)).toEqual([0, 0, 0]);
    expect(metrics['advantage/frac_reward_zero_std']).toBe(0);
  });

  test("grpo averages each trajectory's turns first: one baseline per prompt (hand-worked)", async () => {
    const { batch } = await runStep('grpo', [twoAgents]);
    // trajectory scores: t0 = (1 + 1) / 2 = 1, t1 = (0 + 1) / 2 = 0.5; mean 0.75, std sqrt(0.125) = 0.35355339
    // A = +-0.25 / (0.35355339 + 1e-6) = +-0.70710478, on every turn of the trajectory
    for (const row of [0, 1]) expect(advantagesOf(batch, row)[1]).toBeCloseTo(0.70710478, 7);
    for (const row of [2, 3]) expect(advantagesOf(batch, row)[1]).toBeCloseTo(-0.70710478, 7);
  });

  test('a zero-variance group is counted and, on request, kept out of the loss', async () => {
    const equal: RolloutBatch = {
      metrics: {},
      trajectories: [trajectory('g', 'a', { solver: 1 }, 1), trajectory('g', 'b', { solver: 1 }, 1)],
    };
    const masks: number[][] = [];
    const excluded: number[][] = [];
    const { kernel } = await createKernel({
      cwd: process.cwd(),
      inline: {
        plugins: [
          algorithmsPlugin(),
          producer([equal]),
          {
            name: 'u',
            apply(k) {
              k.hooks.update.tap('u', (g) => {
                masks.push([...trainedColumns(g.batch, g.rows).responseMask()], [...g.batch.responseMask]);
                excluded.push([...g.rows].map((r) => g.batch.excludedRows?.[r] ?? 0));
              });
            },
          },
        ],
        algorithm: { advantage: 'drmas', excludeZeroStdGroups: true },
      },
    });
    const { metrics } = await kernel.step(kernel.runContext({ runDir: '/x', log: () => {} }), 1);
    expect(metrics['advantage/frac_reward_zero_std']).toBe(1);
    // Both rows marked in excludedRows: a loss sees no trained token (one column of 0 each), the packed mask is as packed.
    expect(excluded).toEqual([[1, 1]]);
    expect(masks).toEqual([
      [0, 0],
      [1, 1, 1, 1, 1, 1],
    ]);
  });

  test('every estimator is selectable by name, and a misspelt one gets a suggestion', async () => {
    const { kernel } = await runStep('rloo', [twoAgents]);
    const { AdvantageEstimator } = await import('@drmas/core');
    const names = kernel.namesOf(AdvantageEstimator);
    expect(names.sort()).toEqual([
      'drmas',
      'gae',
      'gigpo',
      'gpg',
      'grpo',
      'grpo_passk',
      'magrpo',
      'maremax',
      'marloo',
      'opo',
      'rae',
      'reinforce_plus_plus',
      'reinforce_plus_plus_baseline',
      'remax',
      'rloo',
    ]);
    await expect(runStep('drmass', [twoAgents])).rejects.toMatchObject({
      code: 'UNKNOWN_NAME',
      key: 'algorithm.advantage',
      hint: 'Did you mean "drmas"?',
    });
  });
});

describe('estimator inputs are checked at validate', () => {
  test.each([
    ['gae', 'values', 'critic values at every response token'],
    ['remax', 'baselineRewards', 'the reward of a greedy rollout of each prompt'],
    ['gigpo', 'observations', 'the environment observation each turn acted on'],
  ])('%s without a plugin that supplies %s fails before any step, with its own message', async (name, input, what) => {
    const error = await runStep(name, [twoAgents]).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'CONFIG_INVALID', key: 'algorithm.advantage' });
    expect((error as Error).message).toBe(
      `advantage estimator "${name}" needs ${input}: ${BATCH_INPUTS[input as BatchInput]}; no plugin in this config supplies it`,
    );
    expect((error as Error).message).toContain(what);
  });

  test('a plugin that supplies the input makes the estimator valid; its column is filled before the estimator runs', async () => {
    const baselines: Plugin = {
      name: 'fixed-baseline',
      register: (ctx) =>
        ctx.provide(BatchInputSource, 'baselineRewards', {
          fill: (batch) => {
            batch.baselineRewards = new Float64Array(batch.rows).fill(0.25);
          },
        }),
      apply() {},
    };
    const { batch } = await runStep('remax', [twoAgents], {}, [baselines]);
    // ReMax on row 0 (solver, reward 1 on its last of 3 tokens): reward-to-go [1, 1, 1] minus 0.25.
    expect(advantagesOf(batch, 0)).toEqual([0.75, 0.75, 0.75]);
  });

  test('groupKey and excludeZeroStdGroups are rejected for estimators that do not group rows', async () => {
    await expect(runStep('reinforce_plus_plus', [twoAgents], { excludeZeroStdGroups: true })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      key: 'algorithm.excludeZeroStdGroups',
      message: expect.stringContaining('"reinforce_plus_plus" does not group rows'),
    });
    await expect(runStep('reinforce_plus_plus', [twoAgents], { groupKey: 'prompt_agent' })).rejects.toMatchObject({
      key: 'algorithm.groupKey',
    });
    await expect(runStep('rloo', [twoAgents], { statisticsUnit: 'trajectory' })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      key: 'algorithm.statisticsUnit',
      message: expect.stringContaining('"rloo" does not'),
    });
  });
});

describe('DAPO dynamic sampling on afterRollout', () => {
  const flat: RolloutBatch = {
    metrics: {},
    trajectories: [
      trajectory('g0', 'a', { s: 1 }, 1),
      trajectory('g0', 'b', { s: 1 }, 1),
      trajectory('g1', 'c', { s: 0 }, 0),
      trajectory('g1', 'd', { s: 1 }, 1),
    ],
  };
  const varied: RolloutBatch = {
    metrics: {},
    trajectories: [
      trajectory('g2', 'e', { s: 0 }, 0),
      trajectory('g2', 'f', { s: 1 }, 1),
      trajectory('g3', 'g', { s: 0 }, 0),
      trajectory('g3', 'h', { s: 0 }, 0),
    ],
  };

  test('drops groups with equal outcomes and samples again until the batch is full', async () => {
    const { rollout, metrics } = await runStep('grpo', [flat, varied], { dynamicSampling: { enabled: true } });
    expect(rollout.trajectories.map((t) => t.trajectoryId)).toEqual(['c', 'd', 'e', 'f']);
    expect(metrics['rollout/dynamic_sampling_rounds']).toBe(2);
  });

  test('gives up after maxRounds with a warning and trains on what it has', async () => {
    const solved: RolloutBatch = {
      metrics: {},
      trajectories: [
        trajectory('g0', 'a', { s: 1 }, 1),
        trajectory('g0', 'b', { s: 1 }, 1),
        trajectory('g1', 'c', { s: 0 }, 0),
        trajectory('g1', 'd', { s: 0 }, 0),
      ],
    };
    const { rollout, batch, logs, metrics } = await runStep('grpo', [solved], { dynamicSampling: { enabled: true, maxRounds: 3 } });
    expect(rollout.trajectories).toEqual([]);
    expect(batch.rows).toBe(0);
    expect(metrics['rollout/dynamic_sampling_rounds']).toBe(3);
    expect(logs.join('\n')).toContain('dynamic sampling gave up after 3 rounds with 0 of 2 groups');
  });
});

describe('PolicyLossFunction (the training loss over TensorOps)', () => {
  const logProbs = [
    [-1.2, -0.3, -2.0, -0.7],
    [-0.1, -3.0, -0.5, -0.9],
    [-0.8, -0.8, -0.2, -1.1],
  ];
  const oldLogProbs = [
    [-1.0, -0.9, -1.0, -0.7],
    [-0.6, -1.0, -0.5, -0.2],
    [-0.8, -1.5, -0.9, -1.0],
  ];
  const refLogProbs = [
    [-1.1, -0.5, -1.5, -0.6],
    [-0.3, -2.0, -0.4, -0.5],
    [-0.9, -1.0, -0.5, -1.2],
  ];
  const advantages = [
    [1.5, 1.5, 1.5, 1.5],
    [-2.0, -2.0, -2.0, -2.0],
    [0.4, 0.4, 0.4, 0.4],
  ];
  const responseMask = [
    [1, 1, 1, 0],
    [1, 1, 0, 0],
    [1, 1, 1, 1],
  ];
  const settings = { clipRatioLow: 0.2, clipRatioHigh: 0.28, clipRatioC: 3, klCoef: 0, klType: 'low_var_kl' as const, entropyCoef: 0 };
  const totals = { tokens: 9, rows: 3, responseLength: 4, microBatches: 1 };
  const run = (fn: PolicyLossFunction, rows: number[], t = totals) => {
    const pick = (m: number[][]) => arr(rows.map((r) => m[r]!));
    const out = fn.compute(hostTensorOps, {
      logProbs: pick(logProbs),
      oldLogProbs: pick(oldLogProbs),
      advantages: pick(advantages),
      responseMask: pick(responseMask),
      refLogProbs: pick(refLogProbs),
      totals: lossTotalsInput(hostTensorOps, t),
    });
    return { loss: out.loss.data[0]!, metrics: Object.fromEntries(Object.entries(out.metrics).map(([k, v]) => [k, v.data[0]])) };
  };

  test.each(['vanilla', 'gspo', 'cispo', 'gpg'] as const)(
    '%s: a zero-advantage row adds 0 to the loss under every aggregation',
    (variant) => {
      const zeroed = advantages.map((row, r) => (r === 1 ? row.map(() => 0) : row));
      for (const aggregation of ['token-mean', 'seq-mean-token-sum', 'seq-mean-token-mean', 'seq-mean-token-sum-norm'] as const) {
        const fn = new PolicyLossFunction({ ...settings, variant, aggregation });
        const lossOf = (rows: number[]) => {
          const pick = (m: number[][]) => arr(rows.map((r) => m[r]!));
          return fn.compute(hostTensorOps, {
            logProbs: pick(logProbs),
            oldLogProbs: pick(oldLogProbs),
            advantages: pick(zeroed),
            responseMask: pick(responseMask),
            totals: lossTotalsInput(hostTensorOps, totals),
          }).loss.data[0]!;
        };
        expect(lossOf([0, 2])).toBeCloseTo(lossOf([0, 1, 2]), 12);
        expect(Math.abs(lossOf([1]))).toBe(0);
      }
    },
  );

  test.each(['token-mean', 'seq-mean-token-sum', 'seq-mean-token-mean', 'seq-mean-token-sum-norm'] as const)(
    'vanilla with dual clip and clip-higher equals policyLoss (%s), also summed over micro-batches',
    (aggregation) => {
      const fn = new PolicyLossFunction({ ...settings, variant: 'vanilla', aggregation });
      const expected = policyLoss(
        { logProbs, oldLogProbs, advantages, responseMask },
        { clipRatioLow: 0.2, clipRatioHigh: 0.28, clipRatioC: 3, aggregation },
      );
      const whole = run(fn, [0, 1, 2]);
      expect(whole.loss).toBeCloseTo(expected.loss, 6);
      expect(whole.metrics.pg_clipfrac).toBeCloseTo(expected.clipFraction, 6);
      expect(whole.metrics.pg_clipfrac_lower).toBeCloseTo(expected.clipFractionLower, 6);
      expect(whole.metrics.ppo_kl).toBeCloseTo(expected.approxKl, 6);
      const split = run(fn, [0, 1], { ...totals, microBatches: 2 }).loss + run(fn, [2], { ...totals, microBatches: 2 }).loss;
      expect(split).toBeCloseTo(expected.loss, 6);
    },
  );

  test.each([
    ['cispo', 'token-mean'],
    ['gpg', 'token-mean'],
    ['gspo', 'seq-mean-token-mean'],
    ['gspo', 'token-mean'],
  ] as const)('%s (%s) equals policyLoss, also summed over micro-batches', (variant, aggregation) => {
    const fn = new PolicyLossFunction({ ...settings, variant, aggregation });
    const expected = policyLoss(
      { logProbs, oldLogProbs, advantages, responseMask },
      { variant, clipRatioLow: 0.2, clipRatioHigh: 0.28, aggregation },
    );
    expect(run(fn, [0, 1, 2]).loss).toBeCloseTo(expected.loss, 6);
    expect(run(fn, [0, 1, 2]).metrics.pg_clipfrac).toBeCloseTo(expected.clipFraction, 6);
    const split = run(fn, [0, 1], { ...totals, microBatches: 2 }).loss + run(fn, [2], { ...totals, microBatches: 2 }).loss;
    expect(split).toBeCloseTo(expected.loss, 6);
  });

  test.each(['k1', 'abs', 'k2', 'low_var_kl'] as const)('the KL term (%s) adds klCoef times the aggregated klPenalty', (klType) => {
    const base = run(new PolicyLossFunction({ ...settings, variant: 'vanilla', aggregation: 'token-mean' }), [0, 1, 2]).loss;
    const withKl = run(
      new PolicyLossFunction({ ...settings, variant: 'vanilla', aggregation: 'token-mean', klCoef: 0.1, klType }),
      [0, 1, 2],
    );
    const kl = aggregateLoss(klPenalty(logProbs, refLogProbs, klType), responseMask, 'token-mean');
    expect(withKl.metrics.kl_loss).toBeCloseTo(kl, 6);
    expect(withKl.loss).toBeCloseTo(base + 0.1 * kl, 6);
  });

  test.each([0.01, 0.5, -0.2])(
    'the entropy term: entropyCoef %p subtracts coef x token-mean entropy (a bonus; negative: entropy minimization)',
    (entropyCoef) => {
      const entropy = [
        [0.5, 0.2, 0.9, 7],
        [0.1, 0.3, 7, 7],
        [1.0, 0.0, 0.4, 0.6],
      ];
      // masked token mean by hand: (0.5+0.2+0.9 + 0.1+0.3 + 1.0+0.0+0.4+0.6) / 9 = 4.0 / 9
      const tokenMean = 4.0 / 9;
      const fn = new PolicyLossFunction({ ...settings, variant: 'vanilla', aggregation: 'token-mean', entropyCoef });
      expect(fn.needsEntropy).toBe(true);
      const base = run(new PolicyLossFunction({ ...settings, variant: 'vanilla', aggregation: 'token-mean' }), [0, 1, 2]).loss;
      const out = fn.compute(hostTensorOps, {
        logProbs: arr(logProbs),
        oldLogProbs: arr(oldLogProbs),
        advantages: arr(advantages),
        responseMask: arr(responseMask),
        entropy: arr(entropy),
        totals: lossTotalsInput(hostTensorOps, totals),
      });
      expect(out.metrics.entropy?.data[0]).toBeCloseTo(tokenMean, 6);
      expect(out.loss.data[0]).toBeCloseTo(base - entropyCoef * tokenMean, 6);
    },
  );

  test('the plugin binds the loss from algorithm.loss; each clip bound defaults to clipRatio', async () => {
    const { kernel } = await createKernel({
      cwd: process.cwd(),
      inline: { plugins: ['algorithms'], algorithm: { advantage: 'grpo', loss: { clipRatioHigh: 0.28, entropyCoef: 0.001 } } },
    });
    const loss = kernel.get(LossFunction) as PolicyLossFunction;
    expect(loss.settings).toMatchObject({
      variant: 'vanilla',
      clipRatioLow: 0.2,
      clipRatioHigh: 0.28,
      clipRatioC: 3,
      aggregation: 'token-mean',
      entropyCoef: 0.001,
    });
    expect(loss.needsEntropy).toBe(true);
    expect(loss.needsReference).toBe(false);
    expect(loss.zeroAdvantageRowsInert).toBe(false);
  });

  test('only a loss with no KL and no entropy term lets trainers skip zero-advantage rows', () => {
    const settings = {
      variant: 'vanilla' as const,
      clipRatioLow: 0.2,
      clipRatioHigh: 0.28,
      clipRatioC: 3,
      aggregation: 'token-mean' as const,
      klCoef: 0,
      klType: 'low_var_kl' as const,
      entropyCoef: 0,
    };
    expect(new PolicyLossFunction(settings).zeroAdvantageRowsInert).toBe(true);
    expect(new PolicyLossFunction({ ...settings, klCoef: 0.01 }).zeroAdvantageRowsInert).toBe(false);
    expect(new PolicyLossFunction({ ...settings, entropyCoef: 0.01 }).zeroAdvantageRowsInert).toBe(false);
  });
});
