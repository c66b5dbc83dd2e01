import {
  ADVANTAGE_ESTIMATORS,
  AlgorithmInputError,
  computeAdvantage,
  type AdvantageInput,
  type BuiltinEstimatorName,
} from '../src/index.js';
import { expectClose, expectMatrixClose } from './closeTo.js';

const EPS = 1e-6;

describe('hand-worked advantages', () => {
  // Group a: scores 1, 0, 0 (row 0's reward sits on a padded token and still counts); group b: one row, score 2.
  // mean_a = 1/3; deviations 2/3, -1/3, -1/3; unbiased var = (4/9 + 1/9 + 1/9) / 2 = 1/3; std = sqrt(1/3).
  const input: AdvantageInput = {
    tokenRewards: [
      [0, 0, 1],
      [0, 0, 0],
      [0, 0, 0],
      [2, 0, 0],
    ],
    responseMask: [
      [1, 1, 0],
      [1, 1, 1],
      [1, 0, 1],
      [1, 1, 1],
    ],
    groupIds: ['a', 'a', 'a', 'b'],
  };

  it('grpo: (r - mean) / (std + eps), group of one has mean 0 and std 1, broadcast times mask', () => {
    const s = Math.sqrt(1 / 3);
    const hi = 2 / 3 / (s + EPS);
    const lo = -1 / 3 / (s + EPS);
    const single = 2 / (1 + EPS);
    const out = computeAdvantage(ADVANTAGE_ESTIMATORS.grpo, input);
    expectMatrixClose(
      out.advantages,
      [
        [hi, hi, 0],
        [lo, lo, lo],
        [lo, 0, lo],
        [single, single, single],
      ],
      1e-12,
    );
    expectMatrixClose(out.returns, out.advantages, 0);
  });

  it('grpo without std (Dr. GRPO): r - mean', () => {
    const out = computeAdvantage(ADVANTAGE_ESTIMATORS.grpo, input, { normalizeByStd: false });
    expectMatrixClose(
      out.advantages,
      [
        [2 / 3, 2 / 3, 0],
        [-1 / 3, -1 / 3, -1 / 3],
        [-1 / 3, 0, -1 / 3],
        [2, 2, 2],
      ],
      1e-12,
    );
  });

  it('grpo: equal rewards give 0 (std 0, 0 / eps)', () => {
    const out = computeAdvantage(ADVANTAGE_ESTIMATORS.grpo, {
      tokenRewards: [
        [1, 0],
        [0, 1],
      ],
      responseMask: [
        [1, 1],
        [1, 1],
      ],
      groupIds: ['g', 'g'],
    });
    expectMatrixClose(
      out.advantages,
      [
        [0, 0],
        [0, 0],
      ],
      0,
    );
  });

  it('grpo with trajectories: rows of a trajectory are averaged into one sample', () => {
    // t1 rows score 1 and 1 -> 1; t2 rows 0 and 0 -> 0. Samples 1, 0: mean 0.5, std sqrt(0.5).
    const out = computeAdvantage(ADVANTAGE_ESTIMATORS.grpo, {
      tokenRewards: [[1], [1], [0], [0]],
      responseMask: [[1], [1], [1], [1]],
      groupIds: ['p', 'p', 'p', 'p'],
      trajectoryIds: ['t1', 't1', 't2', 't2'],
    });
    const a = 0.5 / (Math.sqrt(0.5) + EPS);
    expectMatrixClose(out.advantages, [[a], [a], [-a], [-a]], 1e-12);
    // Averaging, not summing: t1 rows 2 and 0 average to 1, the same as above.
    const averaged = computeAdvantage(ADVANTAGE_ESTIMATORS.grpo, {
      tokenRewards: [[2], [0], [0], [0]],
      responseMask: [[1], [1], [1], [1]],
      groupIds: ['p', 'p', 'p', 'p'],
      trajectoryIds: ['t1', 't1', 't2', 't2'],
    });
    expectMatrixClose(averaged.advantages, [[a], [a], [-a], [-a]], 1e-12);
  });

  it('drmas: each agent normalized by its own statistics within the prompt group', () => {
    // planner rows 1, 0: mean 0.5, std sqrt(0.5); solver rows 3, 1: mean 2, std sqrt(2).
    const out = computeAdvantage(ADVANTAGE_ESTIMATORS.drmas, {
      tokenRewards: [[1], [3], [0], [1]],
      responseMask: [[1], [1], [1], [1]],
      groupIds: ['p', 'p', 'p', 'p'],
      agentIds: ['planner', 'solver', 'planner', 'solver'],
      trajectoryIds: ['t1', 't1', 't2', 't2'],
    });
    const p = 0.5 / (Math.sqrt(0.5) + EPS);
    const s = 1 / (Math.sqrt(2) + EPS);
    expectMatrixClose(out.advantages, [[p], [s], [-p], [-s]], 1e-12);
  });

  it('rloo: n/(n-1) (r - mean); a group of one keeps r', () => {
    // group a: n = 3, mean 1/3: 1.5 * (2/3) = 1, 1.5 * (-1/3) = -0.5.
    const out = computeAdvantage(ADVANTAGE_ESTIMATORS.rloo, input);
    expectMatrixClose(
      out.advantages,
      [
        [1, 1, 0],
        [-0.5, -0.5, -0.5],
        [-0.5, 0, -0.5],
        [2, 2, 2],
      ],
      1e-12,
    );
  });

  it('opo: baseline weighted by response length', () => {
    // scores 1, 0 with lengths 3, 1: baseline (3 * 1 + 1 * 0) / 4 = 0.75.
    const out = computeAdvantage(ADVANTAGE_ESTIMATORS.opo, {
      tokenRewards: [
        [0, 0, 1],
        [0, 0, 0],
      ],
      responseMask: [
        [1, 1, 1],
        [1, 0, 0],
      ],
      groupIds: ['g', 'g'],
    });
    expectMatrixClose(
      out.advantages,
      [
        [0.25, 0.25, 0.25],
        [-0.75, 0, 0],
      ],
      1e-12,
    );
  });

  it('gpg: alpha (r - mean), alpha = rows / rows with a nonzero score', () => {
    // scores 1, 0, 0, 2: alpha = 4 / 2 = 2. a: 2 (2/3) = 4/3, 2 (-1/3) = -2/3; b (group of one, mean 0): 4.
    const out = computeAdvantage(ADVANTAGE_ESTIMATORS.gpg, input);
    expectMatrixClose(
      out.advantages,
      [
        [4 / 3, 4 / 3, 0],
        [-2 / 3, -2 / 3, -2 / 3],
        [-2 / 3, 0, -2 / 3],
        [4, 4, 4],
      ],
      1e-12,
    );
  });

  it('grpo_passk: only the best row gets (r_max - r_second) / (std + eps)', () => {
    // scores 1, 3, 2: best row 1, gap 1; mean 2, unbiased var (1 + 1 + 0) / 2 = 1.
    const out = computeAdvantage(ADVANTAGE_ESTIMATORS.grpo_passk, {
      tokenRewards: [[1], [3], [2]],
      responseMask: [[1], [1], [1]],
      groupIds: ['g', 'g', 'g'],
    });
    expectMatrixClose(out.advantages, [[0], [1 / (1 + EPS)], [0]], 1e-12);
    expect(() => computeAdvantage(ADVANTAGE_ESTIMATORS.grpo_passk, input)).toThrow(/at least 2 rows/);
  });

  it('reinforce_plus_plus: discounted returns reset after a masked position', () => {
    // gamma 1, rewards [1, 0, 5], mask [1, 1, 0]: t=2 G=5 (then reset), t=1 G=0, t=0 G=1.
    // Row 1: gamma 1, rewards [0, 0, 1], mask all 1: G = [1, 1, 1]; with gamma 0.5 below: [0.25, 0.5, 1].
    const out = computeAdvantage(ADVANTAGE_ESTIMATORS.reinforce_plus_plus, {
      tokenRewards: [
        [1, 0, 5],
        [0, 0, 1],
      ],
      responseMask: [
        [1, 1, 0],
        [1, 1, 1],
      ],
      groupIds: ['a', 'b'],
    });
    expectMatrixClose(
      out.returns,
      [
        [1, 0, 5],
        [1, 1, 1],
      ],
      0,
    );
    const half = computeAdvantage(
      ADVANTAGE_ESTIMATORS.reinforce_plus_plus,
      { tokenRewards: [[0, 0, 1]], responseMask: [[1, 1, 1]], groupIds: ['a'] },
      { gamma: 0.5 },
    );
    expectMatrixClose(half.returns, [[0.25, 0.5, 1]], 1e-15);
    // Whitened over the batch: masked mean 0, unbiased variance 1, zero where masked.
    const adv = out.advantages.flat();
    const mask = [1, 1, 0, 1, 1, 1];
    const vals = adv.filter((_, i) => mask[i] === 1);
    const mean = vals.reduce((s, v) => s + v, 0) / vals.length;
    const variance = vals.reduce((s, v) => s + (v - mean) ** 2, 0) / (vals.length - 1);
    expectClose(mean, 0, 1e-7);
    expectClose(variance, 1, 1e-6);
    expect(out.advantages[0]?.[2]).toBe(0);
  });

  it('reinforce_plus_plus_baseline: r - mean, then batch whitening', () => {
    // group g: scores 3, 1 -> +1, -1 on one token each; whitening of [1, -1]: mean 0,
    // var = masked_mean(sq) * n/(n-1) = 2/(2 + 1e-8) * 2, scale 1/sqrt(var + 1e-8).
    const out = computeAdvantage(ADVANTAGE_ESTIMATORS.reinforce_plus_plus_baseline, {
      tokenRewards: [
        [3, 0],
        [1, 0],
      ],
      responseMask: [
        [1, 0],
        [1, 0],
      ],
      groupIds: ['g', 'g'],
    });
    const w = 1 / Math.sqrt((2 / (2 + 1e-8)) * 2 + 1e-8);
    expectMatrixClose(
      out.advantages,
      [
        [w, 0],
        [-w, 0],
      ],
      1e-14,
    );
  });

  it('remax: reverse cumulative masked rewards minus the baseline', () => {
    // rewards [0, 1, 0.3] (0.3 padded, dropped), mask [1, 1, 0]: returns [1, 1, 0]; baseline 0.4.
    const out = computeAdvantage(ADVANTAGE_ESTIMATORS.remax, {
      tokenRewards: [[0, 1, 0.3]],
      responseMask: [[1, 1, 0]],
      groupIds: ['g'],
      baselineRewards: [0.4],
    });
    expectMatrixClose(out.returns, [[1, 1, 0]], 1e-15);
    expectMatrixClose(out.advantages, [[0.6, 0.6, 0]], 1e-15);
  });

  it('gae: masked tokens are skipped in the chain; returns = a + V', () => {
    // gamma = lam = 1, V = [0.5, 0.2, 0.1], r = [0, 0, 1], mask [1, 0, 1].
    // t=2: delta = 1 - 0.1 = 0.9, a = 0.9.  t=1 (masked): a would be 0.8, but last stays 0.9 and nv stays 0.1.
    // t=0: delta = 0 + 0.1 - 0.5 = -0.4, a = -0.4 + 0.9 = 0.5.  raw a = [0.5, 0.9, 0.9]; returns [1.0, 1.1, 1.0].
    const out = computeAdvantage(ADVANTAGE_ESTIMATORS.gae, {
      tokenRewards: [[0, 0, 1]],
      responseMask: [[1, 0, 1]],
      groupIds: ['g'],
      values: [[0.5, 0.2, 0.1]],
    });
    expectMatrixClose(out.returns, [[1.0, 1.1, 1.0]], 1e-12);
    // Whitening over the unmasked 0.5 and 0.9: mean 0.7, unbiased var 0.08 -> -/+ 0.2 / sqrt(0.08) (masked token not zeroed, as in veRL).
    const z = 0.2 / Math.sqrt(0.08);
    expectMatrixClose(out.advantages, [[-z, z, z]], 1e-6);
  });

  it('gigpo: episode part + step part over identical anchor observations', () => {
    // episode (mean_norm): scores 1, 0, 0 -> 2/3, -1/3, -1/3.
    // step groups: rows 0, 1 ('s', step rewards 1 and 0.5, mean 0.75) -> 0.25, -0.25; row 2 alone ('t') -> 0.
    const out = computeAdvantage(ADVANTAGE_ESTIMATORS.gigpo, {
      tokenRewards: [[1], [0], [0]],
      responseMask: [[1], [1], [1]],
      groupIds: ['a', 'a', 'a'],
      stepRewards: [1, 0.5, 0.2],
      anchorObservations: ['s', 's', 't'],
    });
    expectMatrixClose(out.advantages, [[2 / 3 + 0.25], [-1 / 3 - 0.25], [-1 / 3]], 1e-12);
    // stepAdvantageWeight 2 doubles the step part.
    const w2 = computeAdvantage(
      ADVANTAGE_ESTIMATORS.gigpo,
      {
        tokenRewards: [[1], [0], [0]],
        responseMask: [[1], [1], [1]],
        groupIds: ['a', 'a', 'a'],
        stepRewards: [1, 0.5, 0.2],
        anchorObservations: ['s', 's', 't'],
      },
      { stepAdvantageWeight: 2 },
    );
    expectMatrixClose(w2.advantages, [[2 / 3 + 0.5], [-1 / 3 - 0.5], [-1 / 3]], 1e-12);
  });

  it('gigpo: similarity threshold merges near-identical observations', () => {
    // 'room 1.' vs 'room 2.': 6 of 7 characters match, ratio 12/14 = 0.857.
    const base = {
      tokenRewards: [[0], [0]],
      responseMask: [[1], [1]],
      groupIds: ['a', 'a'],
      stepRewards: [1, 0],
      anchorObservations: ['room 1.', 'room 2.'],
    };
    expectMatrixClose(computeAdvantage(ADVANTAGE_ESTIMATORS.gigpo, base).advantages, [[0], [0]], 0);
    expectMatrixClose(computeAdvantage(ADVANTAGE_ESTIMATORS.gigpo, base, { similarityThreshold: 0.85 }).advantages, [[0.5], [-0.5]], 1e-12);
    expectMatrixClose(computeAdvantage(ADVANTAGE_ESTIMATORS.gigpo, base, { similarityThreshold: 0.86 }).advantages, [[0], [0]], 0);
  });
});

/** Deterministic pseudo-random numbers (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomBatch(
  seed: number,
  rows = 24,
  cols = 6,
): Required<
  Pick<
    AdvantageInput,
    | 'tokenRewards'
    | 'responseMask'
    | 'groupIds'
    | 'agentIds'
    | 'trajectoryIds'
    | 'values'
    | 'stepRewards'
    | 'anchorObservations'
    | 'baselineRewards'
  >
> {
  const r = rng(seed);
  const responseMask = Array.from({ length: rows }, () => {
    const n = 1 + Math.floor(r() * cols);
    const row = Array.from({ length: cols }, (_, t) => (t < n ? 1 : 0));
    if (n > 2 && r() < 0.4) row[1] = 0;
    return row;
  });
  return {
    tokenRewards: Array.from({ length: rows }, () => Array.from({ length: cols }, () => (r() < 0.3 ? Math.round(r() * 4 - 1) : 0))),
    responseMask,
    groupIds: Array.from({ length: rows }, (_, i) => `g${i % 4}`),
    agentIds: Array.from({ length: rows }, () => (r() < 0.5 ? 'a' : 'b')),
    trajectoryIds: Array.from({ length: rows }, (_, i) => `t${Math.floor(i / 2)}`),
    values: Array.from({ length: rows }, () => Array.from({ length: cols }, () => r() - 0.5)),
    stepRewards: Array.from({ length: rows }, () => r()),
    anchorObservations: Array.from({ length: rows }, () => `s${Math.floor(r() * 3)}`),
    baselineRewards: Array.from({ length: rows }, () => r()),
  };
}

describe('properties', () => {
  it('drmas equals grpo with a single agent and no trajectory ids', () => {
    for (const seed of [1, 2, 3]) {
      const { tokenRewards, responseMask, groupIds } = randomBatch(seed);
      const single = { tokenRewards, responseMask, groupIds, agentIds: Array.from(groupIds, () => 'only') };
      for (const normalizeByStd of [true, false]) {
        expectMatrixClose(
          computeAdvantage(ADVANTAGE_ESTIMATORS.drmas, single, { normalizeByStd }).advantages,
          computeAdvantage(ADVANTAGE_ESTIMATORS.grpo, single, { normalizeByStd }).advantages,
          0,
        );
      }
    }
  });

  it('drmas differs from grpo when agents have different reward scales', () => {
    const b = {
      tokenRewards: [[1], [0], [10], [0]],
      responseMask: [[1], [1], [1], [1]],
      groupIds: ['p', 'p', 'p', 'p'],
      agentIds: ['x', 'x', 'y', 'y'],
    };
    expect(computeAdvantage(ADVANTAGE_ESTIMATORS.drmas, b).advantages).not.toEqual(
      computeAdvantage(ADVANTAGE_ESTIMATORS.grpo, b).advantages,
    );
  });

  const permutationInvariant: BuiltinEstimatorName[] = [
    'grpo',
    'drmas',
    'rloo',
    'opo',
    'gpg',
    'grpo_passk',
    'reinforce_plus_plus',
    'reinforce_plus_plus_baseline',
    'remax',
    'gae',
    'gigpo',
  ];
  it.each(permutationInvariant)('%s advantages are invariant to row order', (name) => {
    const b = randomBatch(7);
    const rows = b.groupIds.length;
    const r = rng(99);
    const perm = Array.from({ length: rows }, (_, i) => i);
    for (let i = rows - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1));
      [perm[i], perm[j]] = [perm[j]!, perm[i]!];
    }
    expect(perm.some((p, i) => p !== i)).toBe(true);
    const permuted = Object.fromEntries(
      Object.entries(b).map(([k, v]) => [k, perm.map((p) => (v as unknown[])[p])]),
    ) as unknown as AdvantageInput;
    const base = computeAdvantage(ADVANTAGE_ESTIMATORS[name], b);
    const moved = computeAdvantage(ADVANTAGE_ESTIMATORS[name], permuted);
    perm.forEach((p, i) => {
      base.advantages[p]!.forEach((v, t) => expectClose(moved.advantages[i]![t]!, v, 1e-9, `${name} row ${p}`));
      base.returns[p]!.forEach((v, t) => expectClose(moved.returns[i]![t]!, v, 1e-9, `${name} returns row ${p}`));
    });
  });

  it('a custom group key function gives the same result as the equivalent built-in key', () => {
    const b = randomBatch(11);
    const custom = computeAdvantage(ADVANTAGE_ESTIMATORS.grpo, b, {
      groupKey: (row, input) => `${input.groupIds![row]}|${input.agentIds![row]}`,
    });
    expectMatrixClose(custom.advantages, computeAdvantage(ADVANTAGE_ESTIMATORS.drmas, b).advantages, 0);
    expectMatrixClose(
      computeAdvantage(ADVANTAGE_ESTIMATORS.drmas, b, { groupKey: 'prompt' }).advantages,
      computeAdvantage(ADVANTAGE_ESTIMATORS.grpo, { ...b, trajectoryIds: undefined }).advantages,
      0,
    );
  });

  it('prompt_agent_turn splits agents further by turn', () => {
    // Same agent, two turns: per-turn groups of one each -> mean 0, std 1.
    const b = {
      tokenRewards: [[1], [3], [0], [1]],
      responseMask: [[1], [1], [1], [1]],
      groupIds: ['p', 'p', 'p', 'p'],
      agentIds: ['x', 'x', 'x', 'x'],
      turnIds: [0, 1, 0, 1],
    };
    const out = computeAdvantage(ADVANTAGE_ESTIMATORS.drmas, b, { groupKey: 'prompt_agent_turn' });
    const t0 = 0.5 / (Math.sqrt(0.5) + EPS);
    const t1 = 1 / (Math.sqrt(2) + EPS);
    expectMatrixClose(out.advantages, [[t0], [t1], [-t0], [-t1]], 1e-12);
  });
});

describe('input validation', () => {
  const ok = {
    tokenRewards: [
      [1, 0],
      [0, 1],
    ],
    responseMask: [
      [1, 1],
      [1, 1],
    ],
    groupIds: ['g', 'g'],
  };

  function thrown(f: () => unknown): AlgorithmInputError {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(AlgorithmInputError);
      expect(e).toBeInstanceOf(Error);
      return e as AlgorithmInputError;
    }
    throw new Error('expected a throw');
  }

  it('group ids are needed only by estimators that group rows', () => {
    const rows = {
      tokenRewards: [
        [0, 1],
        [1, 0],
      ],
      responseMask: [
        [1, 1],
        [1, 1],
      ],
    };
    expect(computeAdvantage(ADVANTAGE_ESTIMATORS.reinforce_plus_plus, rows).advantages).toHaveLength(2);
    expect(
      computeAdvantage(ADVANTAGE_ESTIMATORS.gae, {
        ...rows,
        values: [
          [0, 0],
          [0, 0],
        ],
      }).returns,
    ).toEqual([
      [1, 1],
      [1, 0],
    ]);
    expect(computeAdvantage(ADVANTAGE_ESTIMATORS.remax, { ...rows, baselineRewards: [0.5, 0.5] }).advantages).toEqual([
      [0.5, 0.5],
      [0.5, -0.5],
    ]);
    const error = thrown(() => computeAdvantage(ADVANTAGE_ESTIMATORS.grpo, rows));
    expect(error.key).toBe('groupIds');
    expect(error.message).toContain("estimator 'grpo'");
  });

  it('mismatched lengths name the input at fault', () => {
    expect(thrown(() => computeAdvantage(ADVANTAGE_ESTIMATORS.grpo, { ...ok, groupIds: ['g'] })).key).toBe('groupIds');
    expect(thrown(() => computeAdvantage(ADVANTAGE_ESTIMATORS.grpo, { ...ok, responseMask: [[1, 1]] })).key).toBe('responseMask');
    expect(
      thrown(() =>
        computeAdvantage(ADVANTAGE_ESTIMATORS.grpo, {
          ...ok,
          responseMask: [
            [1, 1, 1],
            [1, 1, 1],
          ],
        }),
      ).key,
    ).toBe('responseMask');
    expect(thrown(() => computeAdvantage(ADVANTAGE_ESTIMATORS.grpo, { ...ok, tokenRewards: [[1, 0], [0]] })).key).toBe('tokenRewards');
    expect(thrown(() => computeAdvantage(ADVANTAGE_ESTIMATORS.drmas, { ...ok, agentIds: ['a'] })).key).toBe('agentIds');
    expect(
      thrown(() => computeAdvantage(ADVANTAGE_ESTIMATORS.gigpo, { ...ok, stepRewards: [1], anchorObservations: ['a', 'b'] })).key,
    ).toBe('stepRewards');
    expect(thrown(() => computeAdvantage(ADVANTAGE_ESTIMATORS.gae, { ...ok, values: [[1, 2]] })).key).toBe('values');
  });

  it('non-finite entries', () => {
    const e = thrown(() =>
      computeAdvantage(ADVANTAGE_ESTIMATORS.grpo, {
        ...ok,
        tokenRewards: [
          [1, NaN],
          [0, 1],
        ],
      }),
    );
    expect(e.key).toBe('tokenRewards');
    expect(e.message).toContain('[0][1]');
    expect(
      thrown(() =>
        computeAdvantage(ADVANTAGE_ESTIMATORS.grpo, {
          ...ok,
          responseMask: [
            [1, '1' as never],
            [1, 1],
          ],
        }),
      ).key,
    ).toBe('responseMask');
  });

  it('missing inputs an estimator needs', () => {
    expect(thrown(() => computeAdvantage(ADVANTAGE_ESTIMATORS.gae, ok)).key).toBe('values');
    expect(thrown(() => computeAdvantage(ADVANTAGE_ESTIMATORS.remax, ok)).key).toBe('baselineRewards');
    expect(thrown(() => computeAdvantage(ADVANTAGE_ESTIMATORS.gigpo, { ...ok, anchorObservations: ['a', 'b'] })).key).toBe('stepRewards');
    expect(thrown(() => computeAdvantage(ADVANTAGE_ESTIMATORS.drmas, ok)).key).toBe('agentIds');
    expect(thrown(() => computeAdvantage(ADVANTAGE_ESTIMATORS.grpo, ok, { groupKey: 'prompt_agent_turn' })).key).toBe('agentIds');
  });

  it('bad options', () => {
    const e = thrown(() => computeAdvantage(ADVANTAGE_ESTIMATORS.grpo, ok, { normaliseByStd: false } as never));
    expect(e.key).toBe('options.normaliseByStd');
    expect(e.message).toContain('Did you mean "normalizeByStd"?');
    expect(thrown(() => computeAdvantage(ADVANTAGE_ESTIMATORS.grpo, ok, { epsilon: -1 })).key).toBe('options.epsilon');
    expect(thrown(() => computeAdvantage(ADVANTAGE_ESTIMATORS.grpo, ok, { groupKey: 'prompt_agnt' as never })).message).toContain(
      // The closest first; core also suggests a name the input contains ("prompt").
      'Did you mean "prompt_agent" or "prompt"?',
    );
    expect(
      thrown(() =>
        computeAdvantage(
          ADVANTAGE_ESTIMATORS.gigpo,
          { ...ok, stepRewards: [1, 0], anchorObservations: ['a', 'b'] },
          { similarityThreshold: 1.5 },
        ),
      ).key,
    ).toBe('options.similarityThreshold');
    expect(
      thrown(() =>
        computeAdvantage(
          ADVANTAGE_ESTIMATORS.gigpo,
          { ...ok, stepRewards: [1, 0], anchorObservations: ['a', 'b'] },
          { gigpoMode: 'std' as never },
        ),
      ).key,
    ).toBe('options.gigpoMode');
  });

  it('batch whitening with fewer than two unmasked tokens', () => {
    expect(
      thrown(() =>
        computeAdvantage(ADVANTAGE_ESTIMATORS.reinforce_plus_plus, { tokenRewards: [[1, 0]], responseMask: [[1, 0]], groupIds: ['g'] }),
      ).key,
    ).toBe('responseMask');
  });
});
