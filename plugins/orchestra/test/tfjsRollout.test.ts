import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { testSlow } from '../../../test/support/describeSlow.js';
import {
  createKernel,
  responseValues,
  TrainingBatch,
  type Plugin,
  type RolloutBatch,
  type RunContext,
  type TextCodec,
  type Trajectory,
} from '@drmas/core';
import { createTfjsPolicyBackend, type TfjsPolicyBackend } from '@drmas/plugin-backend-tfjs';
import envMathPlugin from '@drmas/plugin-env-math';
import envSearchPlugin from '@drmas/plugin-env-search';
import orchestraPlugin, { call, createMathOrchestra, EpisodeRunner, OrchestraRunner, sequential, when, Workflow } from '../src/index.js';
import { testWorkerGroups, workerGroupsPlugin } from './fixtures.js';

// One rollout step of each built-in orchestra on the real tiny model: structure, not quality.
let backend: TfjsPolicyBackend;
beforeAll(async () => {
  backend = await createTfjsPolicyBackend({ model: 'tiny', seed: 0, runtime: 'wasm' });
});
afterAll(() => backend?.dispose());

const sampling = { sampling: { maxNewTokens: 16 } };

async function rolloutStep(roles: string[], config: Record<string, unknown>): Promise<RolloutBatch> {
  let seen: RolloutBatch | undefined;
  const capture: Plugin = {
    name: 'capture',
    apply(k) {
      k.hooks.afterStep.tap('capture', (r) => {
        seen = r.rollout;
      });
    },
  };
  const groups = testWorkerGroups(Object.fromEntries(roles.map((r) => [r, backend])), (b) => b.tokenizer);
  const { kernel } = await createKernel({
    cwd: process.cwd(),
    inline: {
      plugins: [envMathPlugin(), envSearchPlugin(), orchestraPlugin(), workerGroupsPlugin(groups), capture],
      agents: Object.fromEntries(roles.map((r) => [r, sampling])),
      rollout: { promptsPerStep: 2, samplesPerPrompt: 2 },
      ...config,
    },
  });
  const run: RunContext = {
    config: kernel.config,
    container: kernel.container,
    runDir: '/tmp/unused',
    signal: new AbortController().signal,
    log: () => {},
  };
  await kernel.step(run, 1);
  return seen!;
}

function checkTurns(batch: RolloutBatch, codec: TextCodec): void {
  for (const t of batch.trajectories) {
    expect(t.turns.length).toBeGreaterThan(0);
    t.turns.forEach((turn, index) => {
      expect(turn.index).toBe(index);
      expect(turn.responseIds.length).toBeGreaterThan(0);
      expect(turn.responseIds.length).toBeLessThanOrEqual(16);
      expect(turn.logProbs).toHaveLength(turn.responseIds.length);
      expect(turn.logProbs.every((p) => Number.isFinite(p) && p <= 0)).toBe(true);
      expect(turn.responseText).toBe(codec.decode(turn.responseIds, { skipSpecialTokens: true }));
      expect(turn.promptText).toContain('<|im_start|>');
      expect(typeof turn.valid).toBe('boolean');
      expect(turn.reward).toBeDefined();
    });
    expect([0, 1]).toContain(t.outcome);
  }
}

describe('rollout on the tiny tfjs model', () => {
  test('math: solver and verifier turns for 2 prompts x 2 samples', async () => {
    const batch = await rolloutStep(['solver', 'verifier'], {
      orchestra: { name: 'math' },
      env: { name: 'math', levels: [1], testSize: 4 },
    });
    expect(batch.trajectories).toHaveLength(4);
    expect(new Set(batch.trajectories.map((t) => t.groupId)).size).toBe(2);
    checkTurns(batch, backend.tokenizer as TextCodec);
    for (const t of batch.trajectories) expect(t.turns[0]!.agentId).toBe('solver');
  });

  testSlow("each turn records its sampling temperature, and its log-probs are the policy's at that temperature (slow)", async () => {
    const batch = await rolloutStep(['solver', 'verifier'], {
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

  test('search: verifier routes each step; the episode ends by an answer or the step limit', async () => {
    const batch = await rolloutStep(['verifier', 'searcher', 'answerer'], {
      orchestra: { name: 'search' },
      env: { name: 'search', entities: 40, maxSteps: 2 },
    });
    expect(batch.trajectories).toHaveLength(4);
    checkTurns(batch, backend.tokenizer as TextCodec);
    for (const t of batch.trajectories) {
      expect(t.turns[0]!.agentId).toBe('verifier');
      expect(Math.max(...t.turns.map((x) => x.step))).toBeLessThanOrEqual(1);
    }
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
      step: sequential(
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
