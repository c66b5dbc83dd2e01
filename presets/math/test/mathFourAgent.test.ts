import { describe, expect, test } from '@jest/globals';
import { createKernel } from '@drmas/core';
import envMathPlugin, { type MathTask } from '@drmas/plugin-env-math';
import orchestraPlugin, { REWARD_ALLOCATORS, Workflow, type GraphEpisodeRun } from '@drmas/plugin-orchestra';
import { mathWorkflowsPlugin } from '../src/index.js';
import { ScriptedBackend, testWorkerGroups, workerGroupsPlugin } from '../../../plugins/orchestra/test/fixtures.js';

// The math-four-agent workflow on the async executor with scripted agents and the real math environment. Three tasks
// take the three paths worked out by hand:
//   task 0: the Solver is wrong, the Verifier rejects, the Refiner and the Finalizer are right      -> outcome 1
//   task 1: the Solver is right, the Verifier approves (no Refiner), the Finalizer is right          -> outcome 1
//   task 2: the Solver is right, the Verifier's output has no verdict (a reject, and invalid), the Refiner is right,
//           the Finalizer writes no \boxed{} (invalid)                                                -> outcome 0
async function runWorkflow() {
  let tasks: MathTask[] = [];
  const taskOf = (prompt: string) => tasks.findIndex((t) => prompt.includes(t.question));
  const wrong = (task: MathTask) => `${Number(task.answer) + 1}`;
  const backend = new ScriptedBackend('policy', (prompt) => {
    const i = taskOf(prompt);
    const task = tasks[i]!;
    if (prompt.startsWith('Solve:')) return `\\boxed{${i === 0 ? wrong(task) : task.answer}}`;
    if (prompt.startsWith('Check:')) return ['<verify>reject</verify>', '<verify>approve</verify>', 'looks fine'][i]!;
    if (prompt.startsWith('Refine:')) return `\\boxed{${task.answer}}`;
    if (prompt.startsWith('Final:')) return i === 2 ? `the answer is ${task.answer}` : `\\boxed{${task.answer}}`;
    throw new Error(`unexpected prompt ${prompt}`);
  });
  const groups = testWorkerGroups({ solver: backend, verifier: backend, refiner: backend, finalizer: backend });
  const { kernel } = await createKernel({
    cwd: process.cwd(),
    inline: {
      plugins: [envMathPlugin(), orchestraPlugin(), mathWorkflowsPlugin, workerGroupsPlugin(groups)],
      orchestra: { name: 'math-four-agent' },
      env: { name: 'math', levels: [1], testSize: 4 },
      rollout: { executor: { kind: 'async' } },
      reward: { allocator: 'trace_outcome' },
    },
  });
  const workflow = kernel.get(Workflow);
  await workflow.environment().init();
  tasks = workflow.environment().batch(0, 3).tasks as unknown as MathTask[];
  const run = (await workflow.runner().run({ tasks, samplesPerTask: 1, seed: 1, idPrefix: 's1r0' })) as GraphEpisodeRun;
  const allocator = REWARD_ALLOCATORS.find((a) => a.name === 'trace_outcome')!;
  allocator.allocate({ trajectories: run.trajectories, metrics: {} }, { invalidPenalty: (agentId) => workflow.invalidPenalty(agentId) });
  return run;
}

describe('math four-agent: solver, verifier, refiner, finalizer', () => {
  test('a rejected or unparseable verdict goes through the Refiner, an approval straight to the Finalizer; the Finalizer answers', async () => {
    const run = await runWorkflow();
    expect(run.traces.map((t) => t.executions.map((e) => e.node))).toEqual([
      ['solve', 'check', 'refine', 'finalize', 'env.step'],
      ['solve', 'check', 'finalize', 'env.step'],
      ['solve', 'check', 'refine', 'finalize', 'env.step'],
    ]);
    expect(run.trajectories.map((t) => t.outcome)).toEqual([1, 1, 0]);
    // The Finalizer reads the team's turns: the wrong solution, the rejection and the refinement.
    const finalizer = run.traces[0]!.executions[3]!;
    expect(finalizer.input).toMatch(
      /^Final: .*\nThe output of "solver": .*\n\nThe output of "verifier": <verify>reject<\/verify>\n\nThe output of "refiner"/s,
    );
  });

  test('trace_outcome: final-answer accuracy on every turn, less the invalid penalty (0.1) of unformatted turns', async () => {
    const run = await runWorkflow();
    expect(run.trajectories.map((t) => t.turns.map((turn) => [turn.agentId, Number(turn.reward!.toFixed(12))]))).toEqual([
      [
        ['solver', 1],
        ['verifier', 1],
        ['refiner', 1],
        ['finalizer', 1],
      ],
      [
        ['solver', 1],
        ['verifier', 1],
        ['finalizer', 1],
      ],
      [
        ['solver', 0],
        ['verifier', -0.1],
        ['refiner', 0],
        ['finalizer', -0.1],
      ],
    ]);
  });
});
