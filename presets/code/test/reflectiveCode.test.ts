import { afterAll, describe, expect, test } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import { createKernel, type Trajectory } from '@drmas/core';
import envCodePlugin from '@drmas/plugin-env-code';
import orchestraPlugin, { REWARD_ALLOCATORS, Workflow, type EpisodeTrace, type GraphEpisodeRun } from '@drmas/plugin-orchestra';
import { codeOrchestraPlugin, verifyLatestCode } from '../src/index.js';
import { ScriptedBackend, testWorkerGroups, workerGroupsPlugin } from '../../../plugins/orchestra/test/fixtures.js';
import { TempProject } from '../../../test/support/tempProject.js';

// The reflective-code workflow on the async executor with scripted agents (a ScriptedBackend answers each prompt with
// a fixed text) and the real code environment: the verifier tool and the environment run the code in QuickJS.
const scratch = new TempProject('reflective-code');
afterAll(() => scratch.dispose());

/** Three tasks whose tests are written by hand, so each code's pass rate is worked out below. */
const TASKS = [
  { id: 'square', prompt: 'f(x) = x squared', expected: [0, 1, 4, 9] },
  { id: 'double', prompt: 'f(x) = twice x', expected: [0, 2, 4, 6] },
  { id: 'inc', prompt: 'f(x) = x plus one', expected: [1, 2, 3, 4] },
];

/**
 * The Coder's answer to each task at each code turn, and the tests (f(0..3)) each passes:
 * - square: `x` passes f(0), f(1): 0.5; `x + x` passes f(0), f(2): 0.5; `0` passes f(0): 0.25; never all: three turns.
 * - double: `x + x` passes all: the first verification ends the episode.
 * - inc: `x` passes none: 0; `x + 1` passes all: two turns.
 */
const CODE: Record<string, string[]> = {
  square: ['x', 'x + x', '0', 'x * x'],
  double: ['x + x'],
  inc: ['x', 'x + 1'],
};

function dataset(): string {
  const file = scratch.path('tasks.jsonl');
  const lines = TASKS.map((task) =>
    JSON.stringify({
      task_id: task.id,
      prompt: task.prompt,
      language: 'javascript',
      tests: task.expected.map((value, x) => `assertEqual(f(${x}), ${value})`),
    }),
  );
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** One shared scripted model: the Planner and Reflector answer in their tags (the Reflector not, for `inc`), the Coder by turn. */
function scriptedModel(): ScriptedBackend {
  const codeTurns = new Map<string, number>();
  return new ScriptedBackend('policy', (prompt) => {
    const task = TASKS.find((t) => prompt.includes(t.prompt))!;
    if (prompt.includes('Plan: f(x)')) return `<plan>write f for ${task.id}</plan>`;
    if (prompt.includes('Reflect: f(x)')) return task.id === 'inc' ? 'no idea' : '<reflect>fix the failing tests</reflect>';
    const turn = codeTurns.get(task.id) ?? 0;
    codeTurns.set(task.id, turn + 1);
    return `<code>function f(x) { return ${CODE[task.id]![turn]}; }</code>`;
  });
}

async function runWorkflow(maxLoops: number, env: Record<string, unknown> = { name: 'code', code: { file: dataset() } }) {
  const backend = scriptedModel();
  const groups = testWorkerGroups({ planner: backend, coder: backend, reflector: backend });
  const { kernel } = await createKernel({
    cwd: scratch.dir,
    inline: {
      plugins: [envCodePlugin(), orchestraPlugin(), codeOrchestraPlugin, workerGroupsPlugin(groups)],
      orchestra: { name: 'reflective-code', maxLoops },
      env,
      rollout: { executor: { kind: 'async' } },
      reward: { allocator: 'pass_rate_turn_delta' },
    },
  });
  const workflow = kernel.get(Workflow);
  const environment = workflow.environment();
  await environment.init();
  const tasks = environment.batch(0, TASKS.length).tasks;
  const run = (await workflow.runner().run({ tasks, samplesPerTask: 1, seed: 1, idPrefix: 's1r0' })) as GraphEpisodeRun;
  const allocator = REWARD_ALLOCATORS.find((a) => a.name === 'pass_rate_turn_delta')!;
  allocator.allocate({ trajectories: run.trajectories, metrics: {} }, { invalidPenalty: (agentId) => workflow.invalidPenalty(agentId) });
  const byTask = (id: string) => {
    const i = run.trajectories.findIndex((t) => t.taskId === id);
    return { trajectory: run.trajectories[i]!, trace: run.traces[i]! };
  };
  await kernel.shutdown();
  return { run, byTask };
}

const nodes = (trace: EpisodeTrace) => trace.executions.map((e) => e.node);
const rewards = (trajectory: Trajectory) => trajectory.turns.map((t) => [t.agentId, Number(t.reward!.toFixed(12))]);

describe('reflective code: plan, code, verify (tool), reflect', () => {
  test('all tests passing ends the episode early; otherwise at most maxLoops (3) code turns, no reflection after the last', async () => {
    const { byTask } = await runWorkflow(3);
    const square = byTask('square');
    expect(nodes(square.trace)).toEqual([
      ...['plan', 'code', 'verify', 'reflect'],
      ...['plan', 'code', 'verify', 'reflect'],
      ...['plan', 'code', 'verify', 'env.step'],
    ]);
    expect(nodes(byTask('double').trace)).toEqual(['plan', 'code', 'verify', 'env.step']);
    expect(nodes(byTask('inc').trace)).toEqual(['plan', 'code', 'verify', 'reflect', 'plan', 'code', 'verify', 'env.step']);
    // The environment scores the latest code: square's `0` passes 1 of 4.
    expect([square.trajectory.outcome, byTask('double').trajectory.outcome, byTask('inc').trajectory.outcome]).toEqual([0.25, 1, 1]);
    // The verifier's per-test results are in the trace, and its feedback reaches the next plan and code prompts.
    const firstVerify = square.trace.executions[2]!;
    expect(firstVerify).toMatchObject({ kind: 'tool', input: 'code_verifier', stateAfter: { pass_rate: 0.5, all_passed: false } });
    expect((firstVerify.output as { tests: Array<{ passed: boolean }> }).tests.map((t) => t.passed)).toEqual([true, true, false, false]);
    const secondCode = square.trace.executions[5]!;
    expect(secondCode.input).toBe(
      'Code: f(x) = x squared\nPlan: write f for square\nTests: 2/4 tests passed; test 3: Error: expected 4, got 2; test 4: Error: expected 9, got 3\nReflection: fix the failing tests\n',
    );
    // The first code prompt is the code preset's own (`Code: {question}\n`) plus the plan (no chat template here).
    expect(square.trace.executions[1]!.input).toBe('Code: f(x) = x squared\nPlan: write f for square\n');
  });

  test('maxLoops bounds the code turns', async () => {
    const { byTask } = await runWorkflow(2);
    expect(nodes(byTask('square').trace)).toEqual(['plan', 'code', 'verify', 'reflect', 'plan', 'code', 'verify', 'env.step']);
    expect(byTask('square').trajectory.outcome).toBe(0.5);
  });

  test('pass_rate_turn_delta: p(0) on the first turn, the change on later ones, the reflector credited with the turn it led to', async () => {
    const { byTask } = await runWorkflow(3);
    // square: p = 0.5, 0.5, 0.25.
    expect(rewards(byTask('square').trajectory)).toEqual([
      ['planner', 0.5],
      ['coder', 0.5],
      ['reflector', 0],
      ['planner', 0],
      ['coder', 0],
      ['reflector', -0.25],
      ['planner', -0.25],
      ['coder', -0.25],
    ]);
    expect(rewards(byTask('double').trajectory)).toEqual([
      ['planner', 1],
      ['coder', 1],
    ]);
    // inc: p = 0, 1; its reflection is not in the tag, so it also carries the reflector's invalid penalty (0.1).
    expect(rewards(byTask('inc').trajectory)).toEqual([
      ['planner', 0],
      ['coder', 0],
      ['reflector', 0.9],
      ['planner', 1],
      ['coder', 1],
    ]);
  });

  test('the verifier tool refuses an environment other than code, naming env.name', async () => {
    const ctx = { environment: { name: 'math' } } as unknown as Parameters<typeof verifyLatestCode>[0];
    await expect(verifyLatestCode(ctx)).rejects.toMatchObject({ code: 'CONFIG_INVALID', key: 'env.name' });
  });
});
