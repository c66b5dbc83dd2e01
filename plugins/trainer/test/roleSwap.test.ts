import { afterAll, describe, expect, test } from '@jest/globals';
import { createKernel, DrmasError, Stage, WorkerGroups, type ResolvedConfig } from '@drmas/core';
import { roleSwapModels, swappedAt } from '../src/roleSwap/roleSwap.js';
import { copyWeights, sameWeights } from './trainerFixtures.js';
import { toyProject } from './toyRollout.js';

describe('trainer.roleSwap (CORY’s role exchange)', () => {
  test('swapped every other swapEvery steps, from the step alone', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((step) => swappedAt(step, 2))).toEqual([false, false, true, true, false, false, true]);
    expect([1, 2, 3].map((step) => swappedAt(step, 1))).toEqual([false, true, false]);
  });

  test('two roles on one model, or a frozen role, are CONFIG_INVALID at the key to change', () => {
    const config = (agents: Record<string, unknown>) =>
      ({ models: { a: { optimizer: {} }, b: { optimizer: {} } }, agents }) as unknown as ResolvedConfig;
    const error = (agents: Record<string, unknown>) => {
      try {
        roleSwapModels(config(agents), { roles: ['p', 'o'], swapEvery: 1 });
      } catch (e) {
        return e as DrmasError;
      }
      throw new Error('no error');
    };
    expect(roleSwapModels(config({ p: { model: 'a' }, o: { model: 'b' } }), { roles: ['p', 'o'], swapEvery: 1 })).toEqual(['a', 'b']);
    const shared = error({ p: { model: 'a' }, o: { model: 'a' } });
    expect(shared).toBeInstanceOf(DrmasError);
    expect([shared.code, shared.key]).toEqual(['CONFIG_INVALID', 'agents.p.model']);
    expect(error({ p: { model: 'a' }, o: { model: 'b', trainable: false } }).key).toBe('agents.o.trainable');
    expect(error({ p: { model: 'a' } }).key).toBe('trainer.roleSwap.roles');
  });

  test("two LoRA agents on one model swap adapters: each role plays on the other's <model>@<role> group", () => {
    const lora = { rank: 8, alpha: 8, dropout: 0, targetModules: ['q_proj', 'v_proj'] };
    const config = {
      models: { a: { optimizer: {} } },
      agents: { p: { model: 'a', lora }, o: { model: 'a', lora } },
    } as unknown as ResolvedConfig;
    expect(roleSwapModels(config, { roles: ['p', 'o'], swapEvery: 1 })).toEqual(['a@p', 'a@o']);
  });

  const project = toyProject('role-swap', {
    trainer: { steps: 2, seed: 5, logRollouts: 0, roleSwap: { roles: ['left', 'right'], swapEvery: 1 } },
  });
  afterAll(() => project.dispose());

  test('at the configured step each role samples and trains on the other model; both copies train', async () => {
    const { kernel } = await createKernel({ cwd: project.dir });
    const snapshots: Array<Record<'left' | 'right', Map<string, Float32Array>>> = [];
    const take = async () => {
      const groups = kernel.get(WorkerGroups);
      snapshots.push({
        left: copyWeights(await groups.get('left').trainer.exportWeights()),
        right: copyWeights(await groups.get('right').trainer.exportWeights()),
      });
    };
    // Which model sampled each role's rows, per step.
    const playedOn: Array<Record<string, string[]>> = [];
    kernel.hooks.beforeStep.tapPromise({ name: 'snapshot', stage: Stage.LAST }, async (step) => {
      if (step.step === 1) await take();
    });
    kernel.hooks.afterStep.tapPromise({ name: 'snapshot', stage: Stage.LAST }, async (result) => {
      const { ids } = result.batch;
      const models: Record<string, Set<string>> = {};
      for (let r = 0; r < result.batch.rows; r++) {
        const agent = ids.agent.names[ids.agent.codes[r]!]!;
        (models[agent] ??= new Set()).add(ids.workerGroup.names[ids.workerGroup.codes[r]!]!);
      }
      playedOn.push(Object.fromEntries(Object.entries(models).map(([agent, set]) => [agent, [...set]])));
      expect(result.metrics['roleSwap/swapped']).toBe(result.step === 2 ? 1 : 0);
      for (const id of ['left', 'right']) expect(result.metrics[`actor/${id}/updates`]).toBe(1);
      await take();
    });
    const logs: string[] = [];
    await kernel.run({ runDir: project.path('run'), log: (line) => logs.push(line) });
    expect(playedOn).toEqual([
      { left: ['left'], right: ['right'] },
      { left: ['right'], right: ['left'] },
    ]);
    // Every step moved both models.
    for (let k = 0; k < 2; k++)
      for (const id of ['left', 'right'] as const) expect(sameWeights(snapshots[k]![id], snapshots[k + 1]![id])).toBe(false);
    expect(logs).toContain('step 2: left now plays on model right and right on model left (trainer.roleSwap)');
  });
});
