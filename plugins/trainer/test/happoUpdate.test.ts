import { afterEach, describe, expect, jest, test } from '@jest/globals';
import { makeTurn, SeededRng, TrainingBatch, type Metrics, type Turn } from '@drmas/core';
import { TfjsPolicyBackend } from '../../backend-tfjs/src/TfjsPolicyBackend.js';
import { selectRuntime } from '../../backend-tfjs/src/runtime/RuntimeSelector.js';
import { batchLogits, logSoftmax, randomModel, tinyConfigJson } from '../../backend-tfjs/test/modelFixtures.js';
import { happoUpdate } from '../src/happo/happoUpdate.js';
import type { TrainedWorkerGroup } from '../src/WorkerGroupsService.js';
import { copyWeights, sameWeights, singleAgentGroup, vanillaPpoLoss } from './trainerFixtures.js';

const ROLES = ['a', 'b', 'c'] as const;
/** Per trajectory, each role's (prompt, response); the advantage of every token of trajectory i is ADVANTAGES[i]. */
const EPISODES: Array<Record<(typeof ROLES)[number], [number[], number[]]>> = [
  {
    a: [
      [3, 7],
      [12, 5],
    ],
    b: [
      [4, 1],
      [9, 9, 2],
    ],
    c: [[8], [30, 4]],
  },
  {
    a: [
      [3, 7],
      [6, 2],
    ],
    b: [
      [4, 1],
      [10, 3, 3],
    ],
    c: [[8], [11, 20]],
  },
];
const ADVANTAGES = [1, -0.5];

const backends: TfjsPolicyBackend[] = [];
afterEach(() => {
  for (const b of backends.splice(0)) b.dispose();
});

/** The summed log-prob of each role's responses under `model` as it is now, by episode (the oracle's ratios). */
function turnLogProbs(model: ReturnType<typeof randomModel>, role: (typeof ROLES)[number]): number[] {
  return EPISODES.map((episode) => {
    const [prompt, response] = episode[role];
    const logits = batchLogits(model, [[...prompt, ...response]])[0]!;
    return response.reduce((sum, token, j) => sum + logSoftmax(logits[prompt.length - 1 + j]!)[token]!, 0);
  });
}

describe('HAPPO sub-steps on real tiny weights', () => {
  test('each sub-step moves only the weights of the role it updates; M is the clipped product of the earlier roles’ ratios', async () => {
    await selectRuntime('wasm');
    const models = Object.fromEntries(ROLES.map((role, i) => [role, randomModel(tinyConfigJson('Qwen2ForCausalLM'), 21 + i)]));
    const groups: Record<string, TrainedWorkerGroup> = {};
    for (const role of ROLES) {
      const backend = new TfjsPolicyBackend('tfjs', 'test', models[role]!, undefined);
      backends.push(backend);
      groups[role] = { ...singleAgentGroup(backend, { lr: 2e-2, microBatchSize: 8, miniBatches: 1 }), id: role, agents: [role] };
    }
    const turns: Turn[] = EPISODES.flatMap((episode, e) =>
      ROLES.map((role, index) =>
        makeTurn({
          groupId: 'g',
          trajectoryId: `t${e}`,
          agentId: role,
          round: 0,
          workerGroupId: role,
          index,
          promptIds: episode[role][0],
          responseIds: episode[role][1],
          logProbs: episode[role][1].map(() => 0),
          valid: true,
        }),
      ),
    );
    const batch = TrainingBatch.fromTurns(turns);
    const R = batch.responseLength;
    turns.forEach((turn, r) =>
      batch.advantages.fill(ADVANTAGES[Number(turn.trajectoryId.slice(1))]!, r * R, r * R + turn.responseIds.length),
    );
    const advantagesBefore = Float64Array.from(batch.advantages);
    const oldLogProbs = Object.fromEntries(ROLES.map((role) => [role, turnLogProbs(models[role]!, role)]));

    // Before each optimizer step (one per sub-step: one epoch, one mini-batch), every role's weights.
    const snapshots: Array<Record<string, Map<string, Float32Array>>> = [];
    const snapshot = async () =>
      snapshots.push(
        Object.fromEntries(
          await Promise.all(ROLES.map(async (role) => [role, copyWeights(await groups[role]!.trainer.exportWeights())] as const)),
        ),
      );
    for (const role of ROLES) {
      const backend = groups[role]!.trainer;
      const update = backend.update.bind(backend);
      jest.spyOn(backend, 'update').mockImplementation(async (request) => {
        await snapshot();
        return update(request);
      });
    }
    const metrics: Metrics = {};
    const order = ['b', 'a', 'c'];
    await happoUpdate(batch, {
      order,
      settings: { order, ratio: 'sequence', sequenceRatio: 'product', factorClip: [0.8, 1.25], roundRobinEvery: 0 },
      groupOf: (role) => groups[role]!,
      metrics,
      updateOptions: () => ({ loss: vanillaPpoLoss(), rng: new SeededRng(0), metrics, lrScale: 1 }),
      oldLogProbs: 'recompute',
    });
    await snapshot();

    expect(snapshots).toHaveLength(4);
    order.forEach((updated, k) => {
      for (const role of ROLES)
        expect([updated, role, sameWeights(snapshots[k]![role]!, snapshots[k + 1]![role]!)]).toEqual([updated, role, role !== updated]);
    });
    // The estimator's advantages are back once the update is done.
    expect(Array.from(batch.advantages)).toEqual(Array.from(advantagesBefore));

    // The oracle: each role's turn ratio from its final weights (untouched after its own sub-step) and the initial ones.
    const clip = (m: number) => Math.min(1.25, Math.max(0.8, m));
    const ratio = (role: string) =>
      turnLogProbs(models[role]!, role as (typeof ROLES)[number]).map((logp, e) => Math.exp(logp - oldLogProbs[role]![e]!));
    const rb = ratio('b');
    const ra = ratio('a');
    expect(rb.some((r) => Math.abs(r - 1) > 1e-3)).toBe(true);
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    // Every role's turns have the same length in both episodes, so M's token mean is its mean over the episodes.
    expect(metrics['happo/b/factor_mean']).toBe(1);
    expect(metrics['happo/a/factor_mean']).toBeCloseTo(mean(rb.map(clip)), 4);
    expect(metrics['happo/c/factor_mean']).toBeCloseTo(mean(rb.map((r, e) => clip(r * ra[e]!))), 4);
    expect([metrics['happo/b/position'], metrics['happo/a/position'], metrics['happo/c/position']]).toEqual([0, 1, 2]);
    for (const role of ROLES) expect(metrics[`actor/${role}/updates`]).toBe(1);
  }, 60_000);
});
