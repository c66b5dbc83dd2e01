import { describe, expect, test } from '@jest/globals';
import { MathEnvironment } from '@drmas/plugin-env-math';
import {
  actionFrom,
  call,
  defineOrchestra,
  evaluateEpisodes,
  loopUntil,
  notLastLoop,
  OrchestraRunner,
  PromptedAgent,
  sequential,
  verdictIs,
  when,
  NO_ACTION,
  type Agent,
} from '../src/index.js';
import { ScriptedBackend } from './fixtures.js';

// The README's third workflow: planner, then a solver/critic loop.
const planSolveCritique = defineOrchestra({
  name: 'plan-solve-critique',
  agents: {
    planner: { prompt: 'PLANNER {question}', tag: 'plan' },
    solver: { prompt: 'SOLVER {question}\n{team_context}', tag: 'boxed' },
    critic: { prompt: 'CRITIC {question}\n{team_context}', tag: 'verify', values: ['approve', 'reject'] },
  },
  round: sequential(
    call('planner'),
    loopUntil(verdictIs('critic', 'approve'), sequential(call('solver'), when(notLastLoop, call('critic'))), { maxLoops: 3 }),
  ),
  action: (row) => actionFrom(row, 'solver', 'answer', 'text') ?? NO_ACTION,
});

async function setup(critic: (prompt: string) => string) {
  const environment = new MathEnvironment({ seed: 1, levels: [1], testSize: 3 });
  await environment.init();
  const backend = new ScriptedBackend('one-model', (prompt) =>
    prompt.startsWith('PLANNER') ? '<plan>add</plan>' : prompt.startsWith('CRITIC') ? critic(prompt) : '\\boxed{0}',
  );
  const agents = new Map<string, Agent>(
    Object.entries(planSolveCritique.agents).map(([role, o]) => [role, new PromptedAgent({ role, ...o })]),
  );
  const runner = new OrchestraRunner({
    environment,
    orchestra: planSolveCritique,
    agents,
    engineFor: () => ({ workerGroupId: 'shared', backend, codec: backend.codec }),
  });
  return { environment, backend, runner };
}

describe('a third workflow from the building blocks', () => {
  test('planner once, then solve/critique until approved', async () => {
    const { environment, backend, runner } = await setup((p) =>
      p.split('"solver"').length > 2 ? '<verify>approve</verify>' : '<verify>reject</verify>',
    );
    const run = await runner.run({ tasks: environment.batch(0, 2).tasks, samplesPerTask: 2, seed: 0, idPrefix: 'x' });
    for (const t of run.trajectories) expect(t.turns.map((x) => x.agentId)).toEqual(['planner', 'solver', 'critic', 'solver', 'critic']);
    expect(backend.batchSizes).toEqual([4, 4, 4, 4, 4]);
  });

  test('evaluateEpisodes: k outcomes per task with validation sampling, and per-agent turn stats', async () => {
    const { environment, backend, runner } = await setup(() => 'no verdict');
    const tasks = environment.test();
    const result = await evaluateEpisodes(runner, tasks, { k: 2, tasksPerBatch: 2 });
    expect(result.tasks.map((t) => t.taskId)).toEqual(tasks.map((t) => t.id));
    for (const t of result.tasks) {
      expect(t.outcomes).toHaveLength(2);
      expect(t.dataSource).toBe('synthetic-arithmetic');
    }
    expect(backend.requests.every((r) => r.temperature === 0.6 && r.topP === 0.95)).toBe(true);
    // 3 tasks x 2 samples: planner 1, solver 3, critic 2 (all invalid) per episode
    expect(result.agents).toEqual({
      planner: { turns: 6, invalidTurns: 0, truncatedTurns: 0, responseTokens: 6 * 16 },
      solver: { turns: 18, invalidTurns: 0, truncatedTurns: 0, responseTokens: 18 * 9 },
      critic: { turns: 12, invalidTurns: 12, truncatedTurns: 0, responseTokens: 12 * 10 },
    });
  });
});
