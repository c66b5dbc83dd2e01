import { describe, expect, test } from '@jest/globals';
import {
  ID_NAMES,
  Kernel,
  makeTrajectoryTurns,
  makeTurn,
  TrainingBatch,
  type Plugin,
  type Trajectory,
  type Turn,
  type TurnFields,
} from '@drmas/core';
import { kernelConfig } from './kernelConfig.js';

function fields(round: number, index: number): TurnFields {
  return {
    groupId: 'g',
    trajectoryId: 't',
    agentId: index % 2 ? 'verifier' : 'solver',
    round,
    workerGroupId: 'policy',
    index,
    promptIds: [1, 2],
    responseIds: [3],
    logProbs: [-0.5],
    valid: true,
  };
}

/** A reader written against 0.1, where a turn's round was `step`. */
function roundsRead01(turns: readonly { readonly step: number }[]): number[] {
  return turns.map((turn) => turn.step);
}

describe("a turn's round, and `step`, its name before 0.2.0", () => {
  test('`step` reads `round`, also after `round` changes', () => {
    const turn = makeTurn(fields(2, 0));
    expect(roundsRead01([turn])).toEqual([2]);
    turn.round = 5;
    expect(roundsRead01([turn])).toEqual([5]);
  });

  test('`step` is not enumerable: JSON, structuredClone, spreads and keys carry `round` alone', () => {
    const turn = makeTurn(fields(3, 1));
    expect(Object.keys(turn)).not.toContain('step');
    expect(Object.keys(turn)).toContain('round');
    expect(Object.prototype.propertyIsEnumerable.call(turn, 'step')).toBe(false);
    const json: unknown = JSON.parse(JSON.stringify(turn));
    expect(json).toEqual({ ...fields(3, 1) });
    expect(JSON.stringify(turn)).not.toContain('"step"');
    expect(Object.keys(structuredClone(turn))).toEqual(Object.keys(fields(3, 1)));
    expect('step' in { ...turn }).toBe(false);
  });

  test("turns parsed from JSON (a rollout worker's result) read `step` again once made", () => {
    const sent: Trajectory = {
      groupId: 'g',
      trajectoryId: 't',
      taskId: 'x',
      done: true,
      turns: [makeTurn(fields(0, 0)), makeTurn(fields(1, 1))],
    };
    const received = JSON.parse(JSON.stringify(sent)) as Trajectory;
    expect(roundsRead01(received.turns)).toEqual([undefined, undefined]);
    expect(roundsRead01(makeTrajectoryTurns(received).turns)).toEqual([0, 1]);
    expect(JSON.stringify(received)).toBe(JSON.stringify(sent));
  });

  test("the batch's id column `round` codes each row's round; `ids.step` is it, not enumerable", () => {
    const batch = TrainingBatch.fromTurns([makeTurn(fields(0, 0)), makeTurn(fields(1, 1)), makeTurn(fields(1, 2)), makeTurn(fields(0, 3))]);
    expect(Array.from(batch.ids.round.codes)).toEqual([0, 1, 1, 0]);
    expect(batch.ids.round.names).toEqual(['0', '1']);
    expect(Object.keys(batch.ids)).toEqual([...ID_NAMES]);
    expect(ID_NAMES).toEqual(['group', 'trajectory', 'agent', 'round', 'workerGroup']);
    expect(batch.ids.step).toBe(batch.ids.round);
    expect(Object.isFrozen(batch.ids)).toBe(true);
  });
});

/**
 * Turns of one episode built without `makeTurn`: as a plugin written against 0.1 builds them (`step`, no `round`), as
 * a literal with `round` (or a structuredClone of a Turn), or with neither.
 */
function turns01(trajectoryId: string, key: 'step' | 'round' | 'none'): Turn[] {
  const turns: unknown[] = [0, 0, 1].map((round, index) => ({
    groupId: 'g',
    trajectoryId,
    agentId: index === 1 ? 'verifier' : 'solver',
    workerGroupId: 'wg',
    ...(key === 'none' ? {} : { [key]: round }),
    index,
    promptIds: [1],
    responseIds: [2],
    logProbs: [-1],
    valid: true,
  }));
  return turns as Turn[];
}

/** A kernel with one rollout tap giving `turns01` episodes, and what the `advantage` hook saw of their rounds. */
async function runWith(key: 'step' | 'round' | 'none') {
  const warnings: string[] = [];
  const seen: { codes: number[]; names: readonly string[]; rounds: number[]; steps: number[]; json: string } = {
    codes: [],
    names: [],
    rounds: [],
    steps: [],
    json: '',
  };
  const plugin: Plugin = {
    name: 'bandit-01',
    apply(kernel) {
      kernel.hooks.rollout.tapPromise('bandit-01', async () => ({
        metrics: {},
        trajectories: ['t0', 't1'].map((id) => ({ groupId: 'g', trajectoryId: id, taskId: 'x', done: true, turns: turns01(id, key) })),
      }));
      kernel.hooks.advantage.tap('bandit-01', (batch) => {
        seen.codes = Array.from(batch.ids.round.codes);
        seen.names = batch.ids.round.names;
        seen.rounds = batch.turns.map((turn) => turn.round);
        seen.steps = batch.turns.map((turn) => turn.step);
        seen.json = JSON.stringify(batch.turns[2]);
      });
    },
  };
  const kernel = new Kernel({ warn: (message) => warnings.push(message) });
  kernel.configure(kernelConfig(2), [{ plugin, key: 'plugins[0]', listedIn: 'test', request: plugin.name, resolvedFrom: 'inline' }]);
  await kernel.run({ runDir: '/nonexistent', log: () => {} });
  return { warnings, seen };
}

describe('turns built as before 0.2.0 (`step`, no `round`), from a rollout tap', () => {
  test('are read with `step` as their round, with one warning naming the tap', async () => {
    const { warnings, seen } = await runWith('step');
    expect(seen.codes).toEqual([0, 0, 1, 0, 0, 1]);
    expect(seen.names).toEqual(['0', '1']);
    expect(seen.rounds).toEqual([0, 0, 1, 0, 0, 1]);
    expect(seen.steps).toEqual([0, 0, 1, 0, 0, 1]);
    expect(JSON.parse(seen.json)).toMatchObject({ round: 1 });
    expect(seen.json).not.toContain('"step"');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("the rollout hook's taps (bandit-01) build turns with `step`");
    expect(warnings[0]).toContain('makeTurn');
  });

  test('turns with `round` built without makeTurn are made Turns: `step` reads the round, no warning', async () => {
    const { warnings, seen } = await runWith('round');
    expect(seen.rounds).toEqual([0, 0, 1, 0, 0, 1]);
    expect(seen.steps).toEqual([0, 0, 1, 0, 0, 1]);
    expect(seen.json).not.toContain('"step"');
    expect(warnings).toEqual([]);
  });

  test('a turn with neither is refused, naming the turn, the tap and what to do', async () => {
    await expect(runWith('none')).rejects.toMatchObject({
      code: 'PLUGIN_INVALID',
      message: expect.stringContaining(
        "turn 0 (agent solver) of trajectory t0, from the rollout hook's taps (bandit-01) at step 1, has no round",
      ),
      hint: expect.stringContaining('makeTurn({ ..., round })'),
    });
  });
});
