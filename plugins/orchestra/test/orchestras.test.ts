import { describe, expect, test } from '@jest/globals';
import { MathEnvironment } from '@drmas/plugin-env-math';
import { createMathOrchestra } from '../src/index.js';
import { scriptedRunner, type Scripts } from './fixtures.js';

async function mathSetup(scripts: Scripts, maxLoops?: number) {
  const environment = new MathEnvironment({ seed: 3, levels: [1], testSize: 4 });
  await environment.init();
  const { tasks } = environment.batch(0, 2);
  return { tasks, ...scriptedRunner(createMathOrchestra(), environment, scripts, maxLoops ? { maxLoops } : {}) };
}

const solveCorrectly = (tasks: { question: string; answer: string }[]) => (prompt: string) => {
  const task = tasks.find((t) => prompt.includes(t.question))!;
  return `<think>compute</think> \\boxed{${task.answer}}`;
};

const agentsOf = (turns: { agentId: string }[]) => turns.map((t) => t.agentId);

describe('math orchestra (Solver, Verifier loop)', () => {
  test("stops on approve: one solve and one verification, the solver's answer scored", async () => {
    let tasksRef: { question: string; answer: string }[] = [];
    const { runner, tasks } = await mathSetup({ solver: (p) => solveCorrectly(tasksRef)(p), verifier: () => '<verify>approve</verify>' });
    tasksRef = tasks;
    const run = await runner.run({ tasks, samplesPerTask: 2, seed: 1, idPrefix: 't' });
    for (const t of run.trajectories) {
      expect(agentsOf(t.turns)).toEqual(['solver', 'verifier']);
      expect(t.outcome).toBe(1);
      expect(t.done).toBe(true);
    }
  });

  test('stops at maxLoops with no Verifier after the last solve; the latest solve is the answer', async () => {
    const { runner, backends, tasks } = await mathSetup(
      {
        solver: () => '\\boxed{x}',
        verifier: () => '<think>step 2 is wrong</think><verify>reject</verify>',
      },
      3,
    );
    const run = await runner.run({ tasks: tasks.slice(0, 1), samplesPerTask: 2, seed: 1, idPrefix: 't' });
    for (const t of run.trajectories) expect(agentsOf(t.turns)).toEqual(['solver', 'verifier', 'solver', 'verifier', 'solver']);
    expect(backends.solver!.batchSizes).toEqual([2, 2, 2]);
    expect(backends.verifier!.batchSizes).toEqual([2, 2]);
    // the second solve sees the first solve and the verifier's critique as team context
    const secondPrompt = run.trajectories[0]!.turns[2]!.promptText!;
    expect(secondPrompt).toContain('The output of "solver": \\boxed{x}');
    expect(secondPrompt).toContain('The output of "verifier": <think>step 2 is wrong</think><verify>reject</verify>');
  });

  test('unparseable verifier output counts as reject (departure from Python Dr. MAS), and is an invalid turn', async () => {
    const { runner, tasks } = await mathSetup({
      solver: (p) => solveCorrectly(tasksRef)(p),
      verifier: () => 'Looks good to me!',
    });
    const tasksRef = tasks;
    const run = await runner.run({ tasks, samplesPerTask: 1, seed: 1, idPrefix: 't' });
    for (const t of run.trajectories) {
      expect(agentsOf(t.turns)).toEqual(['solver', 'verifier', 'solver']);
      expect(t.turns[1]).toMatchObject({ valid: false, invalidReason: 'missing <verify>' });
      expect(t.outcome).toBe(1);
    }
  });

  test('turn scores: each solve scored on its own answer, each verdict on the solve before it', async () => {
    const retry = (p: string) => p.includes('The output of "solver"');
    const { runner, tasks } = await mathSetup({
      // task 0: wrong, then right; task 1: right, then wrong
      solver: (p) => {
        const first = p.includes(tasksRef[0]!.question) ? !retry(p) : retry(p);
        return first ? '\\boxed{-999}' : solveCorrectly(tasksRef)(p);
      },
      verifier: () => '<verify>reject</verify>',
    });
    const tasksRef = tasks;
    const run = await runner.run({ tasks, samplesPerTask: 1, seed: 1, idPrefix: 't' });
    const scores = run.trajectories.map((t) => t.turns.map((turn) => turn.info?.turnScore));
    // rejecting the wrong solve is right (1); rejecting the right one is wrong (0)
    expect(scores).toEqual([
      [0, 1, 1],
      [1, 0, 0],
    ]);
    expect(run.trajectories.map((t) => t.outcome)).toEqual([1, 0]);
  });

  test('turn scores: approving a wrong solve scores 0, an unparseable verdict 0', async () => {
    const { runner, tasks } = await mathSetup({
      solver: () => '\\boxed{-999}',
      verifier: (p) => (p.includes(tasksRef[0]!.question) ? '<verify>approve</verify>' : 'fine'),
    });
    const tasksRef = tasks;
    const run = await runner.run({ tasks, samplesPerTask: 1, seed: 1, idPrefix: 't' });
    expect(run.trajectories.map((t) => t.turns.map((turn) => turn.info?.turnScore))).toEqual([
      [0, 0],
      [0, 0, 0],
    ]);
  });

  test('rows that are approved leave the loop; only rejected rows reach the next solve (one batched call each)', async () => {
    const { runner, backends, tasks } = await mathSetup({
      solver: (p) => solveCorrectly(tasksRef)(p),
      verifier: (p) => (p.includes(tasksRef[0]!.question) ? '<verify>approve</verify>' : '<verify>reject</verify>'),
    });
    const tasksRef = tasks;
    const run = await runner.run({ tasks, samplesPerTask: 3, seed: 1, idPrefix: 't' });
    expect(backends.solver!.batchSizes).toEqual([6, 3]);
    expect(backends.verifier!.batchSizes).toEqual([6]);
    expect(run.generateCalls).toEqual({ solver: 2, verifier: 1 });
    expect(run.trajectories.map((t) => t.turns.length)).toEqual([2, 2, 2, 3, 3, 3]);
  });
});

describe('turn records', () => {
  test('every key, the prompt ids, and the sampled ids and log-probs exactly as the backend returned them', async () => {
    const { runner, backends, tasks } = await mathSetup({ solver: () => '\\boxed{1}', verifier: () => '<verify>approve</verify>' });
    const run = await runner.run({ tasks, samplesPerTask: 2, seed: 9, idPrefix: 's1r0' });
    const a = run.trajectories[0]!;
    const b = run.trajectories[1]!;
    const c = run.trajectories[2]!;
    expect(a.groupId).toBe('s1r0-p0');
    expect(b.groupId).toBe(a.groupId);
    expect(c.groupId).toBe('s1r0-p1');
    expect(new Set(run.trajectories.map((t) => t.trajectoryId)).size).toBe(4);
    expect(a.taskId).toBe(tasks[0]!.id);
    expect(a.dataSource).toBe('synthetic-arithmetic');
    run.trajectories.forEach((t, row) => {
      t.turns.forEach((turn, index) => {
        const backend = backends[turn.agentId]!;
        const call = 0; // approve on the first verification: one call per agent
        expect(turn).toMatchObject({
          groupId: t.groupId,
          trajectoryId: t.trajectoryId,
          round: 0,
          index,
          workerGroupId: `wg-${turn.agentId}`,
          finishReason: 'stop',
        });
        expect(turn.responseIds).toBe(backend.results[call]!.tokenIds[row]);
        expect(turn.logProbs).toBe(backend.results[call]!.logProbs[row]);
        expect(turn.promptIds).toBe(backend.requests[call]!.prompts[row]);
        expect(turn.promptIds).toEqual(backend.codec.encode(turn.promptText!));
        expect(turn.observation).toBe(tasks[Math.floor(row / 2)]!.question);
      });
      expect(t.turns[0]).toMatchObject({ responseText: '\\boxed{1}', action: { tag: 'boxed', content: '1' }, valid: true });
    });
  });

  test('sampling seeds derive from (seed, step, agent, call): same seed, same seeds; another seed, others', async () => {
    const seeds = async (seed: number) => {
      const { runner, backends, tasks } = await mathSetup({ verifier: () => '<verify>reject</verify>' });
      await runner.run({ tasks, samplesPerTask: 1, seed, idPrefix: 't' });
      return [...backends.solver!.requests, ...backends.verifier!.requests].map((r) => r.seed);
    };
    const first = await seeds(5);
    expect(await seeds(5)).toEqual(first);
    expect(new Set(first).size).toBe(first.length);
    expect(await seeds(6)).not.toEqual(first);
  });
});
