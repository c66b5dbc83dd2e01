import { afterAll, describe, expect, test } from '@jest/globals';
import { createKernel, type HookName } from '@drmas/core';
import { trainerBuiltins } from '../src/builtins/trainerBuiltins.js';
import type { TrainerConfig } from '../src/config/trainerSchema.js';
import type { Critics } from '../src/critic/Critics.js';
import type { WorkerGroupsService } from '../src/WorkerGroupsService.js';
import { toyProject } from './toyRollout.js';

const parts = { groups: (): WorkerGroupsService => ({}) as WorkerGroupsService, critics: {} as Critics };

/** The names of the built-ins `trainerBuiltins` chooses for a config with these sections. */
function chosen(sections: { critic?: object; models?: object; trainer?: object }): string[] {
  const config = { models: {}, critic: {}, trainer: {}, ...sections } as TrainerConfig;
  return trainerBuiltins(config, parts).plugins.map((plugin) => plugin.name);
}

describe("the trainer's features are built-in plugins chosen from the config", () => {
  const always = ['trainer:policy-update', 'trainer:rollout-log', 'trainer:checkpoints', 'trainer:step-metrics'];

  test('a config with no critic, spike guard or role swap gets the policy update, rollouts.jsonl, checkpoints and step metrics', () => {
    expect(chosen({})).toEqual(always);
  });

  test('critic.learner adds the critics and, ahead of the policy update, the HAPPO update phase; spikeGuard and roleSwap add theirs', () => {
    expect(chosen({ critic: { learner: 'happo' } })).toEqual(['trainer:critics', 'trainer:happo', ...always]);
    const guard = { action: 'skip', window: 10, threshold: 4, warmup: 5 };
    expect(chosen({ models: { a: {}, b: { spikeGuard: guard } } })).toEqual([
      'trainer:policy-update',
      'trainer:spike-guard',
      ...always.slice(1),
    ]);
    expect(chosen({ trainer: { roleSwap: { roles: ['a', 'b'], swapEvery: 1 } } })).toEqual([...always, 'trainer:role-swap']);
  });

  describe('applied by the trainer, in the order each hook calls them', () => {
    const plain = toyProject('builtins-plain', { trainer: { steps: 1, seed: 0 } });
    const swapping = toyProject('builtins-swap', { trainer: { steps: 1, seed: 0, roleSwap: { roles: ['left', 'right'], swapEvery: 1 } } });
    afterAll(() => {
      plain.dispose();
      swapping.dispose();
    });

    const trainerTaps = async (dir: string, hooks: HookName[]) => {
      const { kernel } = await createKernel({ cwd: dir });
      return Object.fromEntries(
        hooks.map((hook) => [
          hook,
          kernel
            .tapsOf(hook)
            .map((t) => t.name)
            .filter((name) => name.startsWith('trainer')),
        ]),
      );
    };

    test('no HAPPO without a critic: the kernel calls update, which the policy update taps', async () => {
      const taps = await trainerTaps(plain.dir, ['updatePhase', 'update', 'beforeStep', 'afterStep', 'setup', 'shutdown']);
      expect(taps).toEqual({
        updatePhase: [],
        update: ['trainer:policy-update'],
        // The due checkpoint is written before the step's clock starts.
        beforeStep: ['trainer:checkpoints', 'trainer:step-metrics'],
        // Step metrics first (every other afterStep tap reads them), then rollouts.jsonl, then the checkpoint falls due.
        afterStep: ['trainer:step-metrics', 'trainer:rollout-log', 'trainer:checkpoints'],
        setup: ['trainer', 'trainer:checkpoints'],
        shutdown: ['trainer'],
      });
    });

    test('trainer.roleSwap swaps the roles after the checkpoint and the clock, before anything samples', async () => {
      const taps = await trainerTaps(swapping.dir, ['beforeStep', 'validate']);
      expect(taps).toEqual({
        beforeStep: ['trainer:checkpoints', 'trainer:step-metrics', 'trainer:role-swap'],
        validate: ['trainer', 'trainer:role-swap'],
      });
    });
  });
});
