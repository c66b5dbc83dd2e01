import { afterAll, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { makeTurn, trainedColumns, TrainingBatch, type Turn } from '@drmas/core';
import { runBin } from '../../../test/support/cliRunner.js';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { bestAgainstWorst } from '../src/preference/onlinePairs.js';
import { toyProject } from './toyRollout.js';

function turn(groupId: string, n: number, agentId: string, round: number, reward: number): Turn {
  return makeTurn({
    groupId,
    trajectoryId: `${groupId}-t${n}`,
    agentId,
    round,
    workerGroupId: 'policy',
    index: 0,
    promptIds: [1, 2],
    responseIds: Array.from({ length: 1 + n }, (_, i) => 10 + i),
    logProbs: Array.from({ length: 1 + n }, () => -1),
    reward,
    valid: true,
  });
}

describe('online pairs: best against worst', () => {
  test('per rollout group, agent and round; the first of equal rewards; ties and lone turns skipped', () => {
    const turns = [
      // g0, solver, round 0: rewards 0.2, 0.9, 0.5, 0.9 -> t1 (first 0.9) over t0
      turn('g0', 0, 'solver', 0, 0.2),
      turn('g0', 1, 'solver', 0, 0.9),
      turn('g0', 2, 'solver', 0, 0.5),
      turn('g0', 3, 'solver', 0, 0.9),
      // g0, verifier, round 0: 1 and 1 -> a tie
      turn('g0', 0, 'verifier', 0, 1),
      turn('g0', 1, 'verifier', 0, 1),
      // g1, solver: round 0 holds one turn (no pair); round 1 holds 0 and 1 -> t3 over t2
      turn('g1', 0, 'solver', 0, 0),
      turn('g1', 2, 'solver', 1, 0),
      turn('g1', 3, 'solver', 1, 1),
    ];
    const batch = TrainingBatch.fromTurns(turns);
    const { view, pairs, ties } = bestAgainstWorst(batch.workerGroups()[0]!, 'policy');
    expect({ pairs, ties }).toEqual({ pairs: 2, ties: 1 });
    const pairBatch = view!.batch;
    expect(Array.from(view!.rows)).toEqual([0, 1, 2, 3]);
    expect(pairBatch.turns.map((t) => t.trajectoryId)).toEqual(['g0-t1', 'g0-t0', 'g1-t3', 'g1-t2']);
    // The DPO loss's preference column, cut from `pairs`: +1 on every column of a chosen row, -1 on a rejected one's
    // (the mask keeps the response tokens); `advantages` carries nothing for DPO.
    const R = pairBatch.responseLength;
    expect(R).toBe(4);
    expect(Array.from(trainedColumns(pairBatch, [0, 1]).column('preference'))).toEqual([1, 1, -1, -1]);
    expect(Array.from(pairBatch.advantages.subarray(0, 2 * R))).toEqual(new Array(2 * R).fill(0));
    expect(Array.from(pairBatch.pairs!.chosen)).toEqual([0, 2]);
    expect(Array.from(pairBatch.pairs!.rejected)).toEqual([1, 3]);
  });

  test('a group whose rewards are all equal gives no view', () => {
    const batch = TrainingBatch.fromTurns([turn('g', 0, 'solver', 0, 1), turn('g', 1, 'solver', 0, 1)]);
    expect(bestAgainstWorst(batch.all() as never, 'policy')).toEqual({ view: undefined, pairs: 0, ties: 1 });
  });
});

interface RolloutLine {
  step: number;
  groupId: string;
  agent: string;
  envStep: number;
  reward: number;
}

/** Per step and worker group, the sets (rollout group, agent, round) of two turns or more whose rewards differ, from rollouts.jsonl. */
function differingSets(file: string): Map<string, number> {
  const sets = new Map<string, number[]>();
  for (const line of readFileSync(file, 'utf8').trim().split('\n')) {
    const r = JSON.parse(line) as RolloutLine;
    const key = `${r.step}|${r.agent}|${r.groupId}|${r.envStep}`;
    sets.set(key, [...(sets.get(key) ?? []), r.reward]);
  }
  const counts = new Map<string, number>();
  for (const [key, rewards] of sets) {
    const [step, agent] = key.split('|');
    if (rewards.length > 1 && Math.max(...rewards) > Math.min(...rewards))
      counts.set(`${step}/${agent}`, (counts.get(`${step}/${agent}`) ?? 0) + 1);
  }
  return counts;
}

const metricsOf = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, number>);

describe('drmas train with algorithm.dpo (the toy rollout, two tiny models)', () => {
  const project = toyProject('online-dpo', {
    algorithm: { advantage: 'drmas', dpo: { beta: 0.1 } },
    trainer: { steps: 1, seed: 11, logRollouts: 100 },
  });
  afterAll(() => project.dispose());

  test('the first update against the initial weights has loss ln 2, over the pairs rollouts.jsonl shows', () => {
    const runDir = project.path('run');
    const result = runBin(['train', '--run-dir', runDir], project.dir, 120_000);
    expect(result.code).toBe(0);
    const [line] = metricsOf(`${runDir}/metrics.jsonl`);
    const expected = differingSets(`${runDir}/rollouts.jsonl`);
    for (const group of ['left', 'right']) {
      // Two rollout groups of four samples per agent: each is a pair or a tie.
      expect(line![`actor/${group}/dpo_pairs`]).toBe(expected.get(`1/${group}`) ?? 0);
      expect(line![`actor/${group}/dpo_pairs`]! + line![`actor/${group}/dpo_ties`]!).toBe(2);
      // Policy = reference before the first update: every log-ratio is 0, so -log sigmoid(0).
      if (line![`actor/${group}/dpo_pairs`]! > 0) expect(line![`actor/${group}/loss`]).toBeCloseTo(Math.LN2, 5);
      expect(line![`actor/${group}/rewards/margins`]).toBe(0);
    }
  }, 120_000);
});

describeSlow('online DPO learns (the toy rollout, 25 steps)', () => {
  const project = toyProject('online-dpo-learning', {
    algorithm: { advantage: 'drmas', dpo: { beta: 0.1, reference: 'rollout' } },
    trainer: { steps: 25, seed: 11, logRollouts: 0 },
  });
  afterAll(() => project.dispose());

  test('best-against-worst pairs against the rollout policy lift the outcome from chance (about 0.5) above 0.8', () => {
    const runDir = project.path('run');
    const result = runBin(['train', '--run-dir', runDir], project.dir, 300_000);
    expect(result.code).toBe(0);
    const lines = metricsOf(`${runDir}/metrics.jsonl`);
    const mean = (rows: Array<Record<string, number>>, key: string) => rows.reduce((s, r) => s + r[key]!, 0) / rows.length;
    expect(Math.abs(mean(lines.slice(0, 5), 'outcome/mean') - 0.5)).toBeLessThan(0.1);
    expect(mean(lines.slice(-5), 'outcome/mean')).toBeGreaterThan(0.8);
    // No reference model is loaded with reference: rollout (with initial, each model is loaded twice).
    expect(result.stderr.match(/model left: /g)).toHaveLength(1);
  });
});
