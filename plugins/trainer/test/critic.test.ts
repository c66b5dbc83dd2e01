import { describe, expect, test } from '@jest/globals';
import { createKernel, Engines, makeTurn, resolveConfig, TrainingBatch, type ResolvedConfig } from '@drmas/core';
import { WorkerGroupsService } from '../src/WorkerGroupsService.js';
import { planCritics } from '../src/critic/criticPlan.js';
import { BUILTIN_CRITIC_LEARNERS, CriticLearner } from '../src/critic/CriticLearner.js';
import { jointContexts } from '../src/critic/jointContexts.js';
import type { TrainerConfig } from '../src/config/trainerSchema.js';

/** A resolved config of two models (`a` with solver and verifier, `b` with judge) and the given critic section. */
async function configWith(critic: Record<string, unknown>): Promise<ResolvedConfig> {
  const resolution = await resolveConfig({
    cwd: process.cwd(),
    inline: {
      plugins: ['trainer', 'backend-tfjs', 'algorithms'],
      models: { a: { model: 'tiny' }, b: { model: 'tiny', optimizer: { lr: 1e-3 } } },
      agents: { solver: { model: 'a', train: { epochs: 2 } }, verifier: { model: 'a', train: { epochs: 2 } }, judge: { model: 'b' } },
      algorithm: { advantage: 'gae' },
      critic,
    },
  });
  return resolution.config;
}

describe('the critics a learner plans', () => {
  const all = new Set(['solver', 'verifier', 'judge']);
  test('ppo: one per worker group over its agents; ippo: one per role; mappo: one over every agent', async () => {
    const ppo = planCritics(await configWith({ learner: 'ppo' }), all, BUILTIN_CRITIC_LEARNERS.ppo);
    expect(ppo.map((c) => [c.id, c.agents, c.joint])).toEqual([
      ['a', ['solver', 'verifier'], false],
      ['b', ['judge'], false],
    ]);
    // Epochs follow the policy's (group a trains 2 epochs); the optimizer is the critic's own (veRL's lr 1e-5).
    expect(ppo.map((c) => [c.training.epochs, c.training.optimizer.lr])).toEqual([
      [2, 1e-5],
      [1, 1e-5],
    ]);
    const ippo = planCritics(await configWith({ learner: 'ippo', optimizer: { lr: 3e-4 }, epochs: 3 }), all, BUILTIN_CRITIC_LEARNERS.ippo);
    expect(ippo.map((c) => [c.id, c.agents, c.policyGroup, c.training.epochs, c.training.optimizer.lr])).toEqual([
      ['solver', ['solver'], 'a', 3, 3e-4],
      ['verifier', ['verifier'], 'a', 3, 3e-4],
      ['judge', ['judge'], 'b', 3, 3e-4],
    ]);
    const mappo = planCritics(await configWith({ learner: 'mappo', model: 'small' }), all, BUILTIN_CRITIC_LEARNERS.mappo);
    expect(mappo.map((c) => [c.id, c.agents, c.joint, c.settings.model])).toEqual([
      ['joint', ['solver', 'verifier', 'judge'], true, 'small'],
    ]);
    // Roles whose estimator reads no values get no critic.
    expect(planCritics(await configWith({ learner: 'ippo' }), new Set(['judge']), BUILTIN_CRITIC_LEARNERS.ippo).map((c) => c.id)).toEqual([
      'judge',
    ]);
    expect(planCritics(await configWith({}), all, undefined)).toEqual([]);
  });

  test("happo: MAPPO's one centralized critic over every agent", async () => {
    const happo = planCritics(await configWith({ learner: 'happo' }), all, BUILTIN_CRITIC_LEARNERS.happo);
    expect(happo.map((c) => [c.id, c.learner, c.agents, c.joint])).toEqual([['joint', 'happo', ['solver', 'verifier', 'judge'], true]]);
  });
  test('mappo cannot share the trunk of two policy models', async () => {
    const config = await configWith({ learner: 'mappo', shareTrunk: true });
    expect(() => planCritics(config, all, BUILTIN_CRITIC_LEARNERS.mappo)).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID', key: 'critic.shareTrunk' }),
    );
  });
});

describe('the critic learners', () => {
  test('are named contributions that drmas info lists, each saying its critics, policy update and credit', async () => {
    const { kernel } = await createKernel({ cwd: process.cwd(), inline: { plugins: ['trainer', 'algorithms'] } });
    expect(kernel.namesOf(CriticLearner).sort()).toEqual(['happo', 'ippo', 'mappo', 'ppo', 'qmix', 'vdn']);
    expect(kernel.getNamed(CriticLearner, 'qmix')).toMatchObject({ critics: 'role', credit: 'qmix' });
    expect(kernel.getNamed(CriticLearner, 'happo')).toMatchObject({ critics: 'joint', policyUpdate: 'sequential' });
    expect(() => kernel.getNamed(CriticLearner, 'mapo', 'critic.learner')).toThrow(
      expect.objectContaining({ code: 'UNKNOWN_NAME', key: 'critic.learner', hint: expect.stringContaining('mappo') }),
    );
  });
});

describe("MAPPO's joint context", () => {
  test("each turn reads every earlier turn's response of its episode, then its own prompt; the latest tokens when too long", () => {
    // Two episodes, interleaved as packed: e1 (rows 0, 1, 2) and e2 (row 3).
    const batch = TrainingBatch.fromTrajectories(
      [
        {
          id: 'e1',
          turns: [
            [
              [1, 2],
              [10, 11],
            ],
            [[3], [12]],
            [
              [4, 5],
              [13, 14, 15],
            ],
          ],
        },
        { id: 'e2', turns: [[[6], [16, 17]]] },
      ].map(({ id, turns }) => ({
        groupId: 'g',
        trajectoryId: id,
        taskId: 't',
        done: true,
        turns: turns.map(([prompt, response], index) =>
          makeTurn({
            groupId: 'g',
            trajectoryId: id,
            agentId: index % 2 ? 'verifier' : 'solver',
            workerGroupId: 'a',
            round: index,
            index,
            promptIds: prompt!,
            responseIds: response!,
            logProbs: response!.map(() => 0),
            valid: true,
          }),
        ),
      })),
    );
    const contexts = jointContexts(batch.all(), undefined);
    expect([0, 1, 2, 3].map((row) => Array.from(contexts.get(row)!))).toEqual([[1, 2], [10, 11, 3], [10, 11, 12, 4, 5], [6]]);
    // At most 6 positions: row 2 (a 3-token response) keeps the last 3 tokens of its context.
    expect(Array.from(jointContexts(batch.view([2]), 6).get(2)!)).toEqual([12, 4, 5]);
  });
});

describe('critic settings are checked at load', () => {
  const kernelWith = (config: Record<string, unknown>) =>
    createKernel({
      cwd: process.cwd(),
      inline: {
        plugins: ['trainer', 'backend-tfjs', 'backend-onnx', 'algorithms'],
        models: { policy: { model: 'tiny' } },
        agents: { solver: {} },
        ...config,
      },
    });
  test('gae without a critic names algorithm.advantage and the key to set', async () => {
    await expect(kernelWith({ algorithm: { advantage: 'gae' } })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      key: 'algorithm.advantage',
      hint: expect.stringContaining('set critic.learner'),
    });
  });
  test('a critic no estimator reads is refused', async () => {
    await expect(kernelWith({ algorithm: { advantage: 'grpo' }, critic: { learner: 'ppo' } })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      key: 'critic.learner',
    });
  });
  test('happo: an order that misses a role names critic.happo.order; with online DPO, critic.learner', async () => {
    const happo = (critic: Record<string, unknown>, algorithm: Record<string, unknown> = {}) =>
      kernelWith({
        agents: { solver: {}, verifier: {} },
        algorithm: { advantage: 'gae', ...algorithm },
        critic: { learner: 'happo', ...critic },
      });
    await expect(happo({ happo: { order: ['solver'] } })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      key: 'critic.happo.order',
      message: 'critic.happo.order misses verifier',
    });
    await expect(happo({}, { dpo: {} })).rejects.toMatchObject({ code: 'CONFIG_INVALID', key: 'critic.learner' });
    const { kernel } = await happo({ happo: { order: ['verifier', 'solver'] } });
    expect(kernel.config.critic).toMatchObject({ learner: 'happo', happo: { order: ['verifier', 'solver'], factorClip: [0.5, 2] } });
  });
  test('a policy trained on onnx takes a critic on onnx', async () => {
    const { kernel } = await kernelWith({
      models: { policy: { model: 'tiny', backend: 'onnx' } },
      algorithm: { advantage: 'gae' },
      critic: { learner: 'ppo' },
    });
    expect(kernel.config.models.policy!.backend).toBe('onnx');
  });
  test("LoRA agents take critics of their own: one per agent's group, on the base's trunk, not the adapter's", async () => {
    const { kernel } = await kernelWith({
      agents: { solver: { lora: {} }, verifier: {} },
      algorithm: { advantage: 'gae' },
      critic: { learner: 'ppo' },
    });
    const plans = planCritics(kernel.config, new Set(['solver', 'verifier']), BUILTIN_CRITIC_LEARNERS.ppo);
    expect(plans.map((c) => [c.id, c.agents, c.policyGroup, c.settings.model, c.shareTrunk])).toEqual([
      ['policy@solver', ['solver'], 'policy@solver', 'tiny', false],
      ['policy', ['verifier'], 'policy', 'tiny', false],
    ]);
  });
  test('backend auto (the default) with a critic trains that model on onnx, the best engine that has critics', async () => {
    const { kernel } = await kernelWith({ algorithm: { advantage: 'gae' }, critic: { learner: 'ppo' } });
    const settings = kernel.config.models.policy!;
    expect(settings.backend).toBe('auto');
    // onnx ranks 20, tfjs 10 (no tfjs-node-gpu here), and both have critics.
    const engines = kernel.get(Engines);
    expect(engines.ranked({ needs: ['train'], settings })).toEqual(['onnx', 'tfjs']);
    expect(engines.ranked({ needs: ['train', 'critic'], settings })).toEqual(['onnx', 'tfjs']);
    const logs: string[] = [];
    // The config the trainer's schema validated, as the container injects it.
    const groups = new WorkerGroupsService(kernel.config as TrainerConfig, engines);
    const run = kernel.runContext({ runDir: '', log: (m) => logs.push(m) });
    await groups.create(run, { reference: false, criticGroups: new Set(['policy']) });
    expect(groups.get('policy').engine).toBe('onnx');
    expect(groups.get('policy').trainer.name).toBe('onnx:policy');
    expect(logs).toContain('training engine of policy (models.policy.backend: auto): onnx');
  });
});
