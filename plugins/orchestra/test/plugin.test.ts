import { describe, expect, test } from '@jest/globals';
import { createKernel, makeTurn, type Plugin, type RolloutBatch, type Trajectory, type Turn } from '@drmas/core';
import algorithmsPlugin from '@drmas/plugin-algorithms';
import envMathPlugin from '@drmas/plugin-env-math';
import orchestraPlugin, { drmasAllocator, perTurnAllocator } from '../src/index.js';
import { roleOf, ScriptedBackend, stepCapture, testRunContext, testWorkerGroups, workerGroupsPlugin } from './fixtures.js';

function turn(agentId: string, index: number, valid: boolean, info?: Record<string, unknown>): Turn {
  return makeTurn({
    groupId: 'g',
    trajectoryId: 't',
    agentId,
    round: 0,
    workerGroupId: 'm',
    index,
    promptIds: [1],
    responseIds: [2],
    logProbs: [-1],
    valid,
    info,
  });
}

describe('reward allocation', () => {
  const penalties = { invalidPenalty: (agentId: string) => ({ solver: 0.1, verifier: 0.1 })[agentId] ?? 0 };

  test('drmas: the outcome on every turn of every agent, minus the penalty of invalid turns (hand-worked)', () => {
    // outcome 1; solver valid, verifier invalid, solver valid: 1, 1 - 0.1, 1
    const won: Trajectory = {
      groupId: 'g',
      trajectoryId: 't',
      taskId: 'x',
      done: true,
      outcome: 1,
      turns: [turn('solver', 0, true), turn('verifier', 1, false), turn('solver', 2, true)],
    };
    // outcome 0; one invalid solver turn: -0.1
    const lost: Trajectory = { ...won, trajectoryId: 'u', outcome: 0, turns: [turn('solver', 0, false)] };
    const batch = drmasAllocator.allocate({ trajectories: [won, lost], metrics: {} }, penalties);
    expect(batch.trajectories[0]!.turns.map((t) => t.reward)).toEqual([1, 0.9, 1]);
    expect(batch.trajectories[1]!.turns[0]!.reward).toBeCloseTo(-0.1, 12);
  });

  test('per_turn: turn.info.turnScore (0 when absent), minus the penalty', () => {
    const t: Trajectory = {
      groupId: 'g',
      trajectoryId: 't',
      taskId: 'x',
      done: true,
      outcome: 1,
      turns: [turn('verifier', 0, false), turn('answerer', 1, true, { turnScore: 0.5 })],
    };
    const batch = perTurnAllocator.allocate({ trajectories: [t], metrics: {} }, { invalidPenalty: () => 0.01 });
    expect(batch.trajectories[0]!.turns.map((x) => x.reward)).toEqual([-0.01, 0.5]);
  });
});

/** A kernel with the orchestra plugin on one scripted model whose outputs depend on the sampling seed. */
async function mathKernel(config: Record<string, unknown> = {}, extra: Plugin[] = []) {
  const backend = new ScriptedBackend('policy', (prompt, request) =>
    roleOf(prompt) === 'solver'
      ? `<think>ok</think> \\boxed{${request.seed! % 5}}`
      : `<verify>${request.seed! % 2 ? 'approve' : 'reject'}</verify>`,
  );
  const plugin = orchestraPlugin();
  const capture = stepCapture();
  const { kernel } = await createKernel({
    cwd: process.cwd(),
    inline: {
      plugins: [
        envMathPlugin(),
        plugin,
        workerGroupsPlugin(testWorkerGroups({ solver: backend, verifier: backend })),
        capture.plugin,
        ...extra,
      ],
      trainer: { seed: 7 },
      env: { name: 'math', levels: [1], testSize: 4 },
      rollout: { promptsPerStep: 2, samplesPerPrompt: 3 },
      ...config,
    },
  });
  const step = async (n: number) => {
    const result = await kernel.step(testRunContext(kernel), n);
    return { batch: capture.last().rollout, metrics: result.metrics };
  };
  return { kernel, plugin, backend, step };
}

describe('OrchestraPlugin', () => {
  test('a rollout step: n episodes per task sharing a groupId, rewards allocated, metrics reported', async () => {
    const { step, backend } = await mathKernel();
    const { batch, metrics } = await step(1);
    expect(batch.trajectories).toHaveLength(6);
    const groups = new Set(batch.trajectories.map((t) => t.groupId));
    expect(groups.size).toBe(2);
    for (const t of batch.trajectories) {
      expect(t.taskId).toMatch(/^arith-/);
      expect(t.dataSource).toBe('synthetic-arithmetic');
      expect(t.done).toBe(true);
      for (const x of t.turns) {
        expect(x.workerGroupId).toBe('model-0');
        expect(x.reward).toBeCloseTo((t.outcome ?? 0) - (x.valid ? 0 : 0.1), 12);
      }
    }
    // every generate call of the shared model is a whole agent call: solver, verifier, then maybe solver again
    expect(backend.batchSizes[0]).toBe(6);
    // the orchestra reports only what the trainer cannot see: the outcome per data source and the environment's metrics
    const outcomes = batch.trajectories.map((t) => t.outcome ?? 0);
    expect(metrics['outcome/synthetic-arithmetic/mean']).toBeCloseTo(outcomes.reduce((a, b) => a + b, 0) / 6, 12);
    expect(Object.keys(metrics).filter((k) => /^(rollout|agent|episode|outcome)\//.test(k))).toEqual(['outcome/synthetic-arithmetic/mean']);
  });

  test('getState/setState resume the task stream and the seeds exactly', async () => {
    const a = await mathKernel();
    await a.step(1);
    const state = structuredClone(a.plugin.getState());
    const second = (await a.step(2)).batch;
    const b = await mathKernel();
    b.plugin.setState(state);
    const resumed = (await b.step(2)).batch;
    const view = (batch: RolloutBatch) => batch.trajectories.map((t) => [t.groupId, t.taskId, t.turns.map((x) => x.responseText)]);
    expect(view(resumed)).toEqual(view(second));
    expect(state.cursor).toBe(2);
  });

  test('agents.<role> config sets sampling and the invalid penalty; reward.allocator picks the allocator', async () => {
    const { step, backend, plugin } = await mathKernel({
      agents: { verifier: { sampling: { temperature: 0.3, maxNewTokens: 8 }, invalidPenalty: 0.5 } },
      reward: { allocator: 'per_turn' },
    });
    const { batch } = await step(1);
    const verifierCall = backend.requests[1];
    expect(verifierCall).toMatchObject({ temperature: 0.3, maxNewTokens: 8, topP: 1, stopStrings: ['</verify>'] });
    expect(backend.requests[0]).toMatchObject({ temperature: 1, maxNewTokens: 1024 });
    expect(plugin.workflow().agents().get('verifier')!.invalidPenalty).toBe(0.5);
    for (const t of batch.trajectories) {
      const last = t.turns.filter((x) => x.agentId === 'solver').at(-1)!;
      expect(last.info).toEqual({ turnScore: t.outcome });
      expect(last.reward).toBe(t.outcome);
    }
  });

  test('unknown names are DrmasErrors naming the config key', async () => {
    await expect(mathKernel({ orchestra: { name: 'maths' } })).rejects.toMatchObject({
      code: 'UNKNOWN_NAME',
      key: 'orchestra.name',
      hint: expect.stringContaining('math'),
    });
    await expect(mathKernel({ env: { name: 'serch' } })).rejects.toMatchObject({ key: 'env.name' });
    await expect(mathKernel({ env: { levels: [1] } })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      key: 'env.name',
      message: expect.stringContaining('registered: math (plugin env-math)'),
      hint: 'set env.name to one of: math',
    });
    await expect(mathKernel({ reward: { allocator: 'per-turn' } })).rejects.toMatchObject({ key: 'reward.allocator' });
    await expect(mathKernel({ agents: { solver: { samplng: {} } } })).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
  });
});

describe('batch inputs the orchestra supplies', () => {
  /** One step of the math workflow on `backend` with the estimator `advantage`; the packed batch it trained on. */
  async function stepWith(backend: ScriptedBackend, advantage: string, rollout: { promptsPerStep: number; samplesPerPrompt: number }) {
    const capture = stepCapture();
    const { kernel } = await createKernel({
      cwd: process.cwd(),
      inline: {
        plugins: [
          algorithmsPlugin(),
          envMathPlugin(),
          orchestraPlugin(),
          workerGroupsPlugin(testWorkerGroups({ solver: backend, verifier: backend })),
          capture.plugin,
        ],
        algorithm: { advantage },
        env: { name: 'math', levels: [1], testSize: 4 },
        rollout,
      },
    });
    const { metrics } = await kernel.step(testRunContext(kernel), 1);
    return { batch: capture.last().batch, metrics };
  }

  /** `What is 57 + 73?` -> 130, as the arithmetic source's level-1 questions are written. */
  const solve = (prompt: string) => {
    const [, a, op, b] = /What is (\d+) ([+-]) (\d+)\?/.exec(prompt)!;
    return op === '+' ? Number(a) + Number(b) : Number(a) - Number(b);
  };

  test('remax: one greedy episode per task; every row is trained against its greedy outcome (hand-worked)', async () => {
    // Greedy (temperature 0) solves every problem, sampling never does (it answers -1), the verifier always approves.
    const backend = new ScriptedBackend('policy', (prompt, request) =>
      roleOf(prompt) === 'solver' ? `\\boxed{${request.temperature === 0 ? solve(prompt) : -1}}` : '<verify>approve</verify>',
    );
    const { batch, metrics } = await stepWith(backend, 'remax', { promptsPerStep: 2, samplesPerPrompt: 3 });
    // Sampled: 2 tasks x 3 episodes of a solver and a verifier turn (6 solver calls); greedy: 2 episodes, 2 calls each.
    expect(backend.requests.map((r) => [r.temperature, r.prompts.length])).toEqual([
      [1, 6],
      [1, 6],
      [0, 2],
      [0, 2],
    ]);
    expect(metrics['rollout/greedy_baseline_mean']).toBe(1);
    expect(Array.from(batch.baselineRewards!)).toEqual(new Array(12).fill(1));
    // ReMax: A_t = (reward-to-go) - baseline; every reward is 0 (wrong, valid), so every trained token gets -1.
    const R = batch.responseLength;
    for (let row = 0; row < batch.rows; row++) {
      for (let t = 0; t < batch.responseLengths[row]!; t++) expect(batch.advantages[row * R + t]).toBe(-1);
    }
  });

  test("gigpo: each turn's observation is its anchor state", async () => {
    const backend = new ScriptedBackend('policy', (prompt) => (roleOf(prompt) === 'solver' ? '\\boxed{1}' : '<verify>approve</verify>'));
    const { batch } = await stepWith(backend, 'gigpo', { promptsPerStep: 1, samplesPerPrompt: 2 });
    expect(batch.observations).toEqual(batch.turns.map((t) => t.observation));
    expect(batch.observations![0]).toMatch(/^What is \d+ [+-] \d+\?$/);
  });
});
