import { describe, expect, test } from '@jest/globals';
import { SeededRng } from '@drmas/core';
import { agentCredits, QmixMixer, tdLambdaTargets, VdnMixer, type MixerSample, type QmixState, type ValueMixer } from '../src/index.js';
import { expectClose } from './closeTo.js';

const ADAM = { lr: 0.01, betas: [0.9, 0.999] as [number, number], eps: 1e-8, maxGradNorm: 10 };

/**
 * A one-step cooperative game of two agents: each agent's utility is a table u_k[a] over its own actions, mixed into
 * Q_tot at every joint action and fitted to the payoff end to end, as pymarl trains QMIX: each table cell by gradient
 * descent on the team loss 0.5 mean (Q_tot - R)^2 (its gradient in V_k, (Q_tot - R) dQ_tot/dV_k, from `mix`), the
 * QMIX network by its own Adam on the same loss. The state embedding is constant (a one-shot game has one state).
 * This checks what each mixer can represent; the credit the trainer derives from it is checked below.
 */
function trainOnGame(
  payoff: number[][],
  mixer: ValueMixer,
  steps: number,
  tableLr: number,
): { tables: number[][]; meanSquaredError: number } {
  const tables = [new Array<number>(payoff.length).fill(0), new Array<number>(payoff[0]!.length).fill(0)];
  const state = [1];
  const cells = payoff.flatMap((row, a) => row.map((target, b) => ({ actions: [a, b], target })));
  const valuesAt = (actions: number[]) => actions.map((a, k) => tables[k]![a]!);
  for (let step = 0; step < steps; step++) {
    const gradients = tables.map((table) => table.map(() => 0));
    for (const { actions, target } of cells) {
      const { total, weights } = mixer.mix(valuesAt(actions), state);
      actions.forEach((a, k) => (gradients[k]![a]! += ((total - target) * weights[k]!) / cells.length));
    }
    if (mixer instanceof QmixMixer)
      mixer.step(
        cells.map(({ actions, target }): MixerSample => ({ values: valuesAt(actions), state, target })),
        ADAM,
      );
    tables.forEach((table, k) => table.forEach((_, a) => (table[a]! -= tableLr * gradients[k]![a]!)));
  }
  const meanSquaredError =
    cells.reduce((s, { actions, target }) => s + (mixer.mix(valuesAt(actions), state).total - target) ** 2, 0) / cells.length;
  return { tables, meanSquaredError };
}

describe('VDN on a cooperative game with additive payoffs', () => {
  test("recovers each agent's contribution, up to the constant split between them", () => {
    // R(a, b) = c1[a] + c2[b]
    const c1 = [0, 2, 5];
    const c2 = [1, -1];
    const payoff = c1.map((x) => c2.map((y) => x + y));
    const { tables, meanSquaredError } = trainOnGame(payoff, new VdnMixer(2), 2000, 1);
    expect(meanSquaredError).toBeLessThan(1e-20);
    c1.forEach((x, a) => expectClose(tables[0]![a]! - tables[0]![0]!, x - c1[0]!, 1e-9, `agent 1, action ${a}`));
    c2.forEach((y, b) => expectClose(tables[1]![b]! - tables[1]![0]!, y - c2[0]!, 1e-9, `agent 2, action ${b}`));
    // The split of the constant: u1[0] + u2[0] = c1[0] + c2[0] with either part free.
    expectClose(tables[0]![0]! + tables[1]![0]!, c1[0]! + c2[0]!, 1e-9, 'constant');
  });
});

describe('a monotonic game that is not additive (reward 1 only when both agents pick action 1)', () => {
  const and = [
    [0, 0],
    [0, 1],
  ];

  test("VDN's error stays at the best additive fit's, 1/16, worked by hand", () => {
    // The least-squares additive fit of a 2x2 table is row mean + column mean - grand mean:
    // grand 1/4, rows and columns (0, 1/2): fit [[-1/4, 1/4], [1/4, 3/4]], residuals +-1/4 in every cell, MSE 1/16.
    const { tables, meanSquaredError } = trainOnGame(and, new VdnMixer(2), 2000, 1);
    expectClose(meanSquaredError, 1 / 16, 1e-9, 'VDN mean squared error');
    expectClose(tables[0]![1]! - tables[0]![0]!, 0.5, 1e-9, 'agent 1 gap');
    expectClose(tables[1]![1]! - tables[1]![0]!, 0.5, 1e-9, 'agent 2 gap');
  });

  test('QMIX fits it to small error', () => {
    const { meanSquaredError } = trainOnGame(and, new QmixMixer({ agents: 2, stateDim: 1, embedDim: 8 }, 3), 3000, 0.1);
    expect(meanSquaredError).toBeLessThan(1e-3);
  });
});

/** A mixer with 3 agents over a 4-entry state, at random parameters, and random points (values in [-3, 3], states N(0, 1)). */
function randomPoints(count: number, seed: number): { mixer: QmixMixer; points: { values: number[]; state: number[] }[] } {
  const mixer = new QmixMixer({ agents: 3, stateDim: 4, embedDim: 8 }, seed);
  const rng = new SeededRng(seed).fork('points');
  const points = Array.from({ length: count }, () => ({
    values: Array.from({ length: 3 }, () => 6 * rng.next() - 3),
    state: Array.from({ length: 4 }, () => rng.normal()),
  }));
  return { mixer, points };
}

describe('the QMIX mixer', () => {
  test('is monotonic: dQ_tot/dV_k >= 0 by central differences at every sampled point, and equals its analytic weights', () => {
    const h = 1e-5;
    for (const seed of [1, 2, 3, 4]) {
      const { mixer, points } = randomPoints(50, seed);
      for (const { values, state } of points) {
        const { weights } = mixer.mix(values, state);
        for (let k = 0; k < 3; k++) {
          const up = values.map((v, i) => (i === k ? v + h : v));
          const down = values.map((v, i) => (i === k ? v - h : v));
          const slope = (mixer.mix(up, state).total - mixer.mix(down, state).total) / (2 * h);
          expect(slope).toBeGreaterThanOrEqual(0);
          expectClose(weights[k]!, slope, 1e-6, `dQ/dV_${k}`);
        }
      }
    }
  });

  test("the TD loss's gradient in every parameter and agent value matches central finite differences", () => {
    const { mixer, points } = randomPoints(5, 7);
    const samples: MixerSample[] = points.map((p, i) => ({ ...p, target: i - 2 }));
    const { gradient, valueGradients } = mixer.loss(samples);
    const h = 1e-6;
    const p = mixer.parameters;
    for (let i = 0; i < p.length; i++) {
      const saved = p[i]!;
      p[i] = saved + h;
      const up = mixer.loss(samples).loss;
      p[i] = saved - h;
      const down = mixer.loss(samples).loss;
      p[i] = saved;
      expectClose(gradient[i]!, (up - down) / (2 * h), 1e-6, `parameter ${i}`);
    }
    samples.forEach((sample, s) => {
      for (let k = 0; k < 3; k++) {
        const shifted = (d: number) =>
          samples.map((x, j) => (j === s ? { ...x, values: Array.from(x.values, (v, i) => (i === k ? v + d : v)) } : x));
        const slope = (mixer.loss(shifted(h)).loss - mixer.loss(shifted(-h)).loss) / (2 * h);
        expectClose(valueGradients[s]![k]!, slope, 1e-6, `sample ${s} value ${k}`);
      }
    });
  });

  test('is a few thousand parameters at a policy-sized state embedding', () => {
    // 64-wide state, 2 agents, E = 8: 64 x (16 + 8 + 8 + 8) + (16 + 8 + 8 + 8) + 8 + 1
    expect(new QmixMixer({ agents: 2, stateDim: 64, embedDim: 8 }, 0).parameters.length).toBe(64 * 40 + 40 + 9);
  });

  test('resumes from its saved state exactly: parameters and Adam moments', () => {
    const { points } = randomPoints(4, 11);
    const samples = points.map((p) => ({ ...p, target: 1 }));
    const straight = new QmixMixer({ agents: 3, stateDim: 4, embedDim: 8 }, 11);
    for (let i = 0; i < 5; i++) straight.step(samples, ADAM);
    const first = new QmixMixer({ agents: 3, stateDim: 4, embedDim: 8 }, 11);
    for (let i = 0; i < 2; i++) first.step(samples, ADAM);
    const resumed = new QmixMixer({ agents: 3, stateDim: 4, embedDim: 8 }, 99);
    resumed.setState(JSON.parse(JSON.stringify(first.getState())) as QmixState);
    for (let i = 0; i < 3; i++) resumed.step(samples, ADAM);
    expect(Array.from(resumed.parameters)).toEqual(Array.from(straight.parameters));
  });

  test('refuses a saved state of another shape', () => {
    const saved = new QmixMixer({ agents: 2, stateDim: 4, embedDim: 8 }, 0).getState();
    expect(() => new QmixMixer({ agents: 3, stateDim: 4, embedDim: 8 }, 0).setState(saved)).toThrow(
      expect.objectContaining({ code: 'CHECKPOINT_INVALID' }),
    );
  });
});

describe('team credit', () => {
  test('TD(lambda) targets of an episode, worked by hand', () => {
    // gamma 0.9, lambda 0.8: y2 = 1; y1 = 0.9 (0.2 x 0.9 + 0.8 x 1) = 0.882; y0 = 0.9 (0.2 x 0.5 + 0.8 x 0.882) = 0.72504
    const targets = tdLambdaTargets([0, 0, 1], [0.2, 0.5, 0.9], 0.9, 0.8);
    [0.72504, 0.882, 1].forEach((y, t) => expectClose(targets[t]!, y, 1e-12, `y${t}`));
  });

  test("VDN splits the team's TD error equally among the agents present; the returns are each value plus its share", () => {
    // Q_tot = 1 + 2 = 3, y = 4: error 1, |w|^2 = 2, so 0.5 each; with agent 2 absent, agent 1 takes all of it.
    const credit = agentCredits(new VdnMixer(2), [1, 2], [], 4);
    expect(credit.total).toBe(3);
    expect(Array.from(credit.advantages)).toEqual([0.5, 0.5]);
    expect(Array.from(credit.returns)).toEqual([1.5, 2.5]);
    const alone = agentCredits(new VdnMixer(2), [1, 0], [], 4, [true, false]);
    expect(Array.from(alone.advantages)).toEqual([3, 0]);
  });

  test("QMIX splits the team's TD error along the team loss's gradient, normalized so that the linearized Q_tot reaches y", () => {
    const { mixer, points } = randomPoints(1, 5);
    const { values, state } = points[0]!;
    const credit = agentCredits(mixer, values, state, 2);
    const { valueGradients } = mixer.loss([{ values, state, target: 2 }]);
    const { weights } = mixer.mix(values, state);
    const norm = weights.reduce((s, w) => s + w * w, 0);
    // dL/dV_k = (Q_tot - y) w_k, so y_k - V_k = -dL/dV_k / |w|^2; and sum_k w_k A_k = y - Q_tot.
    for (let k = 0; k < 3; k++) expectClose(credit.returns[k]! - values[k]!, -valueGradients[0]![k]! / norm, 1e-12, `agent ${k}`);
    expectClose(
      weights.reduce((s, w, k) => s + w * credit.advantages[k]!, 0),
      2 - credit.total,
      1e-12,
      'linearized',
    );
    expect(credit.advantages.every((a) => Math.sign(a) === Math.sign(2 - credit.total) || a === 0)).toBe(true);
  });
});
