import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { testSlow } from '../../../test/support/describeSlow.js';
import { createKernel, responseValues, TrainingBatch, type TextCodec, type Trajectory } from '@drmas/core';
import { createTfjsPolicyBackend, type TfjsPolicyBackend } from '@drmas/plugin-backend-tfjs';
import envMathPlugin from '@drmas/plugin-env-math';
import orchestraPlugin, { call, createMathOrchestra, EpisodeRunner, OrchestraRunner, sequential, when, Workflow } from '../src/index.js';
import { checkTurns, rolloutStep } from './engineRuns.js';
import { testWorkerGroups, workerGroupsPlugin } from './fixtures.js';

// One rollout step of the math orchestra on the real tiny model: structure, not quality (the search preset's test runs
// its own orchestra so).
let backend: TfjsPolicyBackend;
beforeAll(async () => {
  backend = await createTfjsPolicyBackend({ model: 'tiny', seed: 0, runtime: 'wasm' });
});
afterAll(() => backend?.dispose());

const sampling = { sampling: { maxNewTokens: 16 } };

describe('rollout on the tiny tfjs model', () => {
  test('math: solver and verifier turns for 2 prompts x 2 samples', async () => {
    const batch = await rolloutStep(backend, ['solver', 'verifier'], {
      orchestra: { name: 'math' },
      env: { name: 'math', levels: [1], testSize: 4 },
    });
    expect(batch.trajectories).toHaveLength(4);
    expect(new Set(batch.trajectories.map((t) => t.groupId)).size).toBe(2);
    checkTurns(batch, backend.tokenizer as TextCodec);
    for (const t of batch.trajectories) expect(t.turns[0]!.agentId).toBe('solver');
  });

  testSlow("each turn records its sampling temperature, and its log-probs are the policy's at that temperature (slow)", async () => {
    const batch = await rolloutStep(backend, ['solver', 'verifier'], {
      orchestra: { name: 'math' },
      env: { name: 'math', levels: [1], testSize: 4 },
      agents: { solver: { sampling: { maxNewTokens: 16, temperature: 0.7 } }, verifier: sampling },
    });
    const turns = batch.trajectories.flatMap((t) => t.turns);
    for (const turn of turns) expect(turn.temperature).toBe(turn.agentId === 'solver' ? 0.7 : 1);
    const view = TrainingBatch.fromTurns(turns).all();
    const scored = responseValues(view, (await backend.score({ batch: view })).logProbs);
    turns.forEach((turn, i) => turn.logProbs.forEach((lp, j) => expect(Math.abs(lp - scored[i]![j]!)).toBeLessThan(1e-4)));
  });
});

describe('a batch run in parts (rollout workers) samples as the whole batch', () => {
  test('with row-keyed streams each prompt group run alone (firstTask) equals its part of the whole run; with positions it does not', async () => {
    const groups = testWorkerGroups({ solver: backend, verifier: backend }, (b) => b.tokenizer);
    const { kernel } = await createKernel({
      cwd: process.cwd(),
      inline: {
        plugins: [envMathPlugin(), orchestraPlugin(), workerGroupsPlugin(groups)],
        agents: { solver: { sampling: { maxNewTokens: 6 } }, verifier: { sampling: { maxNewTokens: 6 } } },
        orchestra: { name: 'math' },
        env: { name: 'math', levels: [1], testSize: 4 },
      },
    });
    const environment = kernel.get(EpisodeRunner).environment;
    await environment.init();
    // The verifier sees two rows of every three: a subset call, where a row's position and its batch index differ.
    const orchestra = {
      ...createMathOrchestra(),
      round: sequential(
        call('solver'),
        when((row) => row.index % 3 !== 0, call('verifier')),
      ),
    };
    const engine = { workerGroupId: 'policy', backend, codec: backend.tokenizer as TextCodec };
    const runner = new OrchestraRunner({ environment, orchestra, agents: kernel.get(Workflow).agents(), engineFor: () => engine });
    const tasks = environment.batch(0, 2).tasks;
    const request = { tasks, samplesPerTask: 3, seed: 42, idPrefix: 's1r0' };
    const turnIds = (trajectories: Trajectory[]) => trajectories.map((t) => t.turns.map((turn) => turn.responseIds));
    const inParts = async (streams: 'row' | 'position') => {
      const parts: Trajectory[] = [];
      for (let t = 0; t < tasks.length; t++)
        parts.push(...(await runner.run({ ...request, sampleStreams: streams, tasks: [tasks[t]!], firstTask: t })).trajectories);
      return parts;
    };
    const whole = (await runner.run({ ...request, sampleStreams: 'row' })).trajectories;
    const parts = await inParts('row');
    expect(parts.map((t) => t.trajectoryId)).toEqual(whole.map((t) => t.trajectoryId));
    expect(parts.map((t) => t.turns.map((turn) => turn.agentId))).toEqual(whole.map((t) => t.turns.map((turn) => turn.agentId)));
    expect(turnIds(parts)).toEqual(turnIds(whole));
    const wholeByPosition = (await runner.run({ ...request, sampleStreams: 'position' })).trajectories;
    expect(turnIds(await inParts('position'))).not.toEqual(turnIds(wholeByPosition));
  });
});
