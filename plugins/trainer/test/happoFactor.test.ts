import { describe, expect, test } from '@jest/globals';
import { DrmasError, makeTurn, TrainingBatch, type BatchView, type Turn } from '@drmas/core';
import { HappoFactor } from '../src/happo/HappoFactor.js';
import { checkHappoOrder, happoOrderAt } from '../src/happo/happoOrder.js';
import type { HappoSettings } from '../src/config/criticConfig.js';

/**
 * Three roles a, b, c updated in that order over two trajectories. Each row: its trajectory, round, role, response
 * length, old and new log-probs per token (new = after its role's sub-step) and its advantage.
 *
 * Hand-worked log-ratios (new - old), per turn:
 *   T1 round 0: a [0.1, 0.2] (sum 0.3, mean 0.15), b [-0.2, -0.1] (sum -0.3, mean -0.15), c 3 tokens
 *   T1 round 1: a [0.7] (sum 0.7), c 1 token           -- another joint action of T1
 *   T2 round 0: a [0.5, 0.5] (sum 1.0, mean 0.5), b [-0.2, -0.2, -0.2] (sum -0.6, mean -0.2), c 3 tokens
 */
const ROWS = [
  { traj: 'T1', round: 0, agent: 'a', old: [-1, -2], new: [-0.9, -1.8], adv: 1 },
  { traj: 'T1', round: 0, agent: 'b', old: [-0.5, -0.5], new: [-0.7, -0.6], adv: 1 },
  { traj: 'T1', round: 0, agent: 'c', old: [-1, -1, -1], new: [-1, -1, -1], adv: 1 },
  { traj: 'T2', round: 0, agent: 'a', old: [-1, -1], new: [-0.5, -0.5], adv: -0.5 },
  { traj: 'T2', round: 0, agent: 'b', old: [-1, -1, -1], new: [-1.2, -1.2, -1.2], adv: -0.5 },
  { traj: 'T2', round: 0, agent: 'c', old: [-2, -2, -2], new: [-2, -2, -2], adv: -0.5 },
  { traj: 'T1', round: 1, agent: 'a', old: [-3], new: [-2.3], adv: 1 },
  { traj: 'T1', round: 1, agent: 'c', old: [-1], new: [-1], adv: 2 },
];

function makeBatch(): { batch: TrainingBatch; old: Float32Array; next: Float32Array; view: (agent: string) => BatchView } {
  const turns: Turn[] = ROWS.map((row, index) =>
    makeTurn({
      groupId: 'g',
      trajectoryId: row.traj,
      agentId: row.agent,
      round: row.round,
      workerGroupId: 'policy',
      index,
      promptIds: [1],
      responseIds: row.old.map(() => 5),
      logProbs: row.old,
      valid: true,
    }),
  );
  const batch = TrainingBatch.fromTurns(turns);
  const R = batch.responseLength;
  const old = new Float32Array(batch.rows * R);
  const next = new Float32Array(batch.rows * R);
  ROWS.forEach((row, r) => {
    old.set(row.old, r * R);
    next.set(row.new, r * R);
    for (let t = 0; t < row.old.length; t++) batch.advantages[r * R + t] = row.adv;
  });
  const view = (agent: string) => batch.view(ROWS.flatMap((row, r) => (row.agent === agent ? [r] : [])));
  return { batch, old, next, view };
}

/** The advantages the policy loss reads on `row`'s response tokens: the estimator's times `advantageFactors` (M). */
const advantagesOf = (batch: TrainingBatch, row: number) =>
  Array.from({ length: ROWS[row]!.old.length }, (_, t) => {
    const at = row * batch.responseLength + t;
    return batch.advantages[at]! * (batch.advantageFactors?.[at] ?? 1);
  });

const SETTINGS = { factorClip: [0.5, 2] as [number, number] };

describe('HAPPO M factor, hand-worked for three agents', () => {
  test('sequence level, product of token ratios: M_b = clip(r_a), M_c = clip(r_a r_b), the product kept unclipped between roles', () => {
    const { batch, old, next, view } = makeBatch();
    const factor = new HappoFactor(batch, { ...SETTINGS, ratio: 'sequence', sequenceRatio: 'product' });
    // a is first: M = 1.
    const first = factor.scale(view('a'));
    expect(advantagesOf(batch, 0)).toEqual([1, 1]);
    expect([first.mean, first.clipped]).toEqual([1, 0]);
    first.restore();
    factor.multiply(view('a'), next, old);

    // b: T1 M = e^0.3 = 1.3498588; T2 M = e^1.0 = 2.718 clipped to 2.
    const b = factor.scale(view('b'));
    expect(advantagesOf(batch, 1)[0]).toBeCloseTo(1.3498588, 5);
    expect(advantagesOf(batch, 4)).toEqual([-1, -1, -1]);
    expect(b.clipped).toBeCloseTo(3 / 5, 10);
    b.restore();
    expect(advantagesOf(batch, 4)).toEqual([-0.5, -0.5, -0.5]);
    factor.multiply(view('b'), next, old);

    // c: T1 round 0 M = e^(0.3 - 0.3) = 1; T2 M = e^(1.0 - 0.6) = e^0.4 = 1.4918247 (not clip(e^1) e^-0.6 = 1.0976);
    // T1 round 1, its own joint action: M = e^0.7 = 2.0137527 clipped to 2.
    const c = factor.scale(view('c'));
    for (const a of advantagesOf(batch, 2)) expect(a).toBeCloseTo(1, 6);
    for (const a of advantagesOf(batch, 5)) expect(a).toBeCloseTo(-0.5 * 1.4918247, 6);
    expect(advantagesOf(batch, 7)).toEqual([4]);
    expect(c.max).toBe(2);
    expect(c.min).toBeCloseTo(1, 6);
    expect(c.mean).toBeCloseTo((3 * 1 + 3 * 1.4918247 + 2) / 7, 6);
    expect(c.clipped).toBeCloseTo(1 / 7, 10);
    c.restore();
    expect(advantagesOf(batch, 5)).toEqual([-0.5, -0.5, -0.5]);
  });

  test("sequence level, geometric mean of a turn's token ratios", () => {
    const { batch, old, next, view } = makeBatch();
    const factor = new HappoFactor(batch, { ...SETTINGS, ratio: 'sequence', sequenceRatio: 'geometric-mean' });
    factor.multiply(view('a'), next, old);
    // b: T1 e^0.15 = 1.1618342, T2 e^0.5 = 1.6487213.
    const b = factor.scale(view('b'));
    expect(advantagesOf(batch, 1)[1]).toBeCloseTo(1.1618342, 6);
    expect(advantagesOf(batch, 4)[2]).toBeCloseTo(-0.5 * 1.6487213, 6);
    b.restore();
    factor.multiply(view('b'), next, old);
    // c: T1 e^(0.15 - 0.15) = 1; T2 e^(0.5 - 0.2) = 1.3498588; T1 round 1 e^0.7 = 2.01 clipped to 2.
    const c = factor.scale(view('c'));
    for (const a of advantagesOf(batch, 2)) expect(a).toBeCloseTo(1, 6);
    for (const a of advantagesOf(batch, 5)) expect(a).toBeCloseTo(-0.5 * 1.3498588, 6);
    expect(advantagesOf(batch, 7)).toEqual([4]);
    c.restore();
  });

  test('token level: per response position, the earlier roles’ token ratios at that position', () => {
    const { batch, old, next, view } = makeBatch();
    const factor = new HappoFactor(batch, { ...SETTINGS, ratio: 'token', sequenceRatio: 'product' });
    factor.multiply(view('a'), next, old);
    // b, T1: positions e^0.1, e^0.2; T2: e^0.5, e^0.5, and 1 at position 2 (a's turn has 2 tokens).
    const b = factor.scale(view('b'));
    expect(advantagesOf(batch, 1)[0]).toBeCloseTo(1.1051709, 6);
    expect(advantagesOf(batch, 1)[1]).toBeCloseTo(1.2214028, 6);
    const t2 = advantagesOf(batch, 4);
    expect(t2[0]).toBeCloseTo(-0.5 * 1.6487213, 6);
    expect(t2[1]).toBeCloseTo(-0.5 * 1.6487213, 6);
    expect(t2[2]).toBe(-0.5);
    b.restore();
    factor.multiply(view('b'), next, old);
    // c, T1: e^(0.1-0.2), e^(0.2-0.1), 1; T2: e^(0.5-0.2) twice, e^-0.2; T1 round 1: e^0.7 clipped to 2.
    const c = factor.scale(view('c'));
    const t1 = advantagesOf(batch, 2);
    expect(t1[0]).toBeCloseTo(0.9048374, 6);
    expect(t1[1]).toBeCloseTo(1.1051709, 6);
    expect(t1[2]).toBe(1);
    const c2 = advantagesOf(batch, 5);
    expect(c2[0]).toBeCloseTo(-0.5 * 1.3498588, 6);
    expect(c2[1]).toBeCloseTo(-0.5 * 1.3498588, 6);
    expect(c2[2]).toBeCloseTo(-0.5 * 0.8187308, 6);
    expect(advantagesOf(batch, 7)).toEqual([4]);
    c.restore();
  });
});

const happo = (overrides: Partial<HappoSettings> = {}): HappoSettings => ({
  order: 'random',
  ratio: 'sequence',
  sequenceRatio: 'product',
  factorClip: [0.5, 2],
  roundRobinEvery: 0,
  ...overrides,
});

describe('HAPPO update order', () => {
  const roles = ['a', 'b', 'c'];

  test('random: a permutation of the roles, the same for the same seed and step, different across steps and seeds', () => {
    const orders = Array.from({ length: 12 }, (_, i) => happoOrderAt(happo(), roles, 3, i + 1));
    for (const order of orders) expect([...order].sort()).toEqual(roles);
    expect(Array.from({ length: 12 }, (_, i) => happoOrderAt(happo(), roles, 3, i + 1))).toEqual(orders);
    expect(new Set(orders.map((o) => o.join())).size).toBeGreaterThan(2);
    const otherSeed = Array.from({ length: 12 }, (_, i) => happoOrderAt(happo(), roles, 4, i + 1));
    expect(otherSeed).not.toEqual(orders);
  });

  test('a configured order is kept; round-robin updates one role per N steps, rotating', () => {
    expect(happoOrderAt(happo({ order: ['c', 'a', 'b'] }), roles, 0, 5)).toEqual(['c', 'a', 'b']);
    const robin = happo({ order: ['c', 'a', 'b'], roundRobinEvery: 2 });
    expect([1, 2, 3, 4, 5, 6, 7].map((step) => happoOrderAt(robin, roles, 0, step))).toEqual([
      ['c'],
      ['c'],
      ['a'],
      ['a'],
      ['b'],
      ['b'],
      ['c'],
    ]);
    expect([1, 2, 3, 4].map((step) => happoOrderAt(happo({ roundRobinEvery: 1 }), roles, 9, step))).toEqual([['a'], ['b'], ['c'], ['a']]);
  });

  test('an order that misses, repeats or invents a role is CONFIG_INVALID at critic.happo.order', () => {
    expect(() => checkHappoOrder(happo({ order: ['a', 'b', 'c'] }), roles)).not.toThrow();
    const error = (order: string[]) => {
      try {
        checkHappoOrder(happo({ order }), roles);
      } catch (e) {
        return e as DrmasError;
      }
      throw new Error('no error');
    };
    const missing = error(['a', 'b']);
    expect(missing).toBeInstanceOf(DrmasError);
    expect([missing.code, missing.key, missing.message]).toEqual(['CONFIG_INVALID', 'critic.happo.order', 'critic.happo.order misses c']);
    expect(error(['a', 'b', 'c', 'd', 'a']).message).toBe('critic.happo.order names d, which is no trainable role; repeats a');
  });
});
