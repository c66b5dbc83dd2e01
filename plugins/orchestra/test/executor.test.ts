import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createKernel, type GenerateRequest, type GenerateResult, type PolicyBackend, type TextCodec, type Trajectory } from '@drmas/core';
import { createTfjsPolicyBackend, type TfjsPolicyBackend } from '@drmas/plugin-backend-tfjs';
import envMathPlugin from '@drmas/plugin-env-math';
import envSearchPlugin from '@drmas/plugin-env-search';
import orchestraPlugin, {
  executorSection,
  GraphExecutor,
  ModelRequestQueue,
  OrchestraRunner,
  Workflow,
  type AgentEngine,
} from '../src/index.js';
import { testWorkerGroups, workerGroupsPlugin } from './fixtures.js';
import { describeSlow } from '../../../test/support/describeSlow.js';

// The async executor on the real tiny model: what it samples, how it batches. Timeouts and traces: executorFailures.test.ts.
let backend: TfjsPolicyBackend;
beforeAll(async () => {
  backend = await createTfjsPolicyBackend({ model: 'tiny', seed: 0, runtime: 'wasm' });
});
afterAll(() => backend?.dispose());

/** The real engine, counting its generate calls and their rows. */
class CountingEngine {
  readonly calls: number[] = [];
  constructor(readonly inner: PolicyBackend) {}
  asBackend(): PolicyBackend {
    return Object.assign(Object.create(this.inner) as PolicyBackend, {
      generate: (request: GenerateRequest): Promise<GenerateResult> => {
        this.calls.push(request.prompts.length);
        return this.inner.generate(request);
      },
    });
  }
}

type OrchestraName = 'math' | 'search' | 'majority_vote' | 'summary' | 'debate';

async function workflowOf(orchestra: OrchestraName, roles: string[], maxNewTokens: number) {
  const groups = testWorkerGroups(Object.fromEntries(roles.map((r) => [r, backend])), (b) => b.tokenizer);
  const { kernel } = await createKernel({
    cwd: process.cwd(),
    inline: {
      plugins: [envMathPlugin(), envSearchPlugin(), orchestraPlugin(), workerGroupsPlugin(groups)],
      agents: Object.fromEntries(roles.map((r) => [r, { sampling: { maxNewTokens } }])),
      orchestra: { name: orchestra, solvers: 2, rounds: 2 },
      env: orchestra === 'search' ? { name: 'search', entities: 40, maxSteps: 3 } : { name: 'math', levels: [1], testSize: 4 },
    },
  });
  const workflow = kernel.get(Workflow);
  await workflow.environment().init();
  return workflow;
}

const executorOptions = (overrides: Partial<ReturnType<typeof executorSection.parse>> = {}) => {
  const { kind: _kind, ...options } = executorSection.parse({});
  return { ...options, ...overrides };
};

const sampled = (trajectories: Trajectory[]) => trajectories.map((t) => t.turns.map((turn) => [turn.agentId, turn.step, turn.responseIds]));

/** Runs the same episodes in lock-step (row streams) and on the executor, counting each one's generate calls. */
async function compareRunners(name: OrchestraName, roles: string[], tasks: number, maxNewTokens: number): Promise<void> {
  const workflow = await workflowOf(name, roles, maxNewTokens);
  const environment = workflow.environment();
  const counting = new CountingEngine(backend);
  const engine: AgentEngine = { workerGroupId: 'policy', backend: counting.asBackend(), codec: backend.tokenizer as TextCodec };
  const base = { environment, orchestra: workflow.orchestra(), agents: workflow.agents(), engineFor: () => engine };
  const request = { tasks: environment.batch(0, tasks).tasks, samplesPerTask: 2, seed: 7, idPrefix: 's1r0' };

  const lockstep = await new OrchestraRunner(base).run({ ...request, sampleStreams: 'row' });
  const lockstepCalls = counting.calls.splice(0);
  const executor = new GraphExecutor({ ...base, executor: executorOptions({ maxWaitMs: 20 }) });
  const run = await executor.run(request);

  expect(sampled(run.trajectories)).toEqual(sampled(lockstep.trajectories));
  expect(run.trajectories.map((t) => [t.outcome, t.done])).toEqual(lockstep.trajectories.map((t) => [t.outcome, t.done]));
  const scores = (ts: Trajectory[]) => ts.map((t) => t.turns.map((turn) => turn.info?.turnScore));
  expect(scores(run.trajectories)).toEqual(scores(lockstep.trajectories));
  // Padding differs between the batches, so log-probs agree to float32 sums' last bits.
  run.trajectories.forEach((t, i) =>
    t.turns.forEach((turn, j) =>
      turn.logProbs.forEach((lp, k) => expect(lp).toBeCloseTo(lockstep.trajectories[i]!.turns[j]!.logProbs[k]!, 4)),
    ),
  );
  // Every row is sampled once, in no more calls than lock-step makes.
  expect(counting.calls.reduce((a, b) => a + b, 0)).toBe(lockstepCalls.reduce((a, b) => a + b, 0));
  expect(counting.calls.length).toBeLessThanOrEqual(lockstepCalls.length);
  expect(run.traces.every((trace) => trace.status === 'completed')).toBe(true);
  await expect(executor.run({ ...request, sampleStreams: 'position' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
}

describe('the async executor samples what the lock-step runner samples with row streams', () => {
  test('math: same agents, steps, tokens, outcomes and turn scores', () => compareRunners('math', ['solver', 'verifier'], 1, 4));
  test('majority_vote (K = 2): the K solver calls keep their seeds on the executor', () =>
    compareRunners('majority_vote', ['solver'], 1, 3));
});

describeSlow('the async executor against lock-step, more episodes (slow)', () => {
  test('math, 3 tasks x 2', () => compareRunners('math', ['solver', 'verifier'], 3, 6));
  test('search, 2 tasks x 2, three steps', () => compareRunners('search', ['verifier', 'searcher', 'answerer'], 2, 6));
  test('summary, 2 tasks x 2', () => compareRunners('summary', ['solver', 'summarizer'], 2, 4));
  test('debate, 2 rounds, 2 tasks x 2', () => compareRunners('debate', ['pro', 'con'], 2, 4));
});

describe('per-model request queues', () => {
  test('concurrent requests coalesce into one generate call, and each row samples what it samples alone', async () => {
    const counting = new CountingEngine(backend);
    const queue = new ModelRequestQueue(counting.asBackend(), { maxBatchSize: 8, maxWaitMs: 50, concurrency: 1 });
    const sampling = { temperature: 1, maxNewTokens: 5 };
    const prompts = [[11, 12, 13], [21, 22], [31, 32, 33, 34], [41]];
    // Each request has its own seed and row key, as agent calls of different episodes and steps do.
    const requests = prompts.map((prompt, i) => ({ prompt, sampling, seed: 1000 + 17 * i, rowKey: 3 * i }));
    const together = await Promise.all(requests.map((request) => queue.submit(request)));
    expect(counting.calls).toEqual([4]);
    expect(together.map((s) => s.batchRows)).toEqual([4, 4, 4, 4]);
    for (const [i, request] of requests.entries()) {
      const alone = await backend.generate({ prompts: [request.prompt], ...sampling, seed: request.seed, rowKeys: [request.rowKey] });
      expect(together[i]!.tokenIds).toEqual(alone.tokenIds[0]);
    }
    expect(queue.stats()).toMatchObject({ batches: 1, rows: 4 });
  });

  test('a full batch leaves at once; the rest waits for maxWaitMs; other sampling settings get their own batch', async () => {
    const counting = new CountingEngine(backend);
    const queue = new ModelRequestQueue(counting.asBackend(), { maxBatchSize: 3, maxWaitMs: 30, concurrency: 1 });
    const a = { temperature: 1, maxNewTokens: 2 };
    const b = { temperature: 0.5, maxNewTokens: 2 };
    const submit = (sampling: typeof a, i: number) => queue.submit({ prompt: [5 + i], sampling, seed: 1, rowKey: i });
    await Promise.all([...[0, 1, 2, 3, 4].map((i) => submit(a, i)), submit(b, 5), submit(b, 6)]);
    expect([...counting.calls].sort()).toEqual([2, 2, 3]);
    expect(queue.pending()).toBe(0);
  });
});
