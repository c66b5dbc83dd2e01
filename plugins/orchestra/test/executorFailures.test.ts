import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  createKernel,
  DrmasError,
  z,
  type EnvAction,
  type Environment,
  type Episode,
  type GenerateRequest,
  type GenerateResult,
  type PolicyBackend,
  type TextCodec,
} from '@drmas/core';
import { createTfjsPolicyBackend, type TfjsPolicyBackend } from '@drmas/plugin-backend-tfjs';
import envMathPlugin from '@drmas/plugin-env-math';
import orchestraPlugin, {
  createMathOrchestra,
  END,
  executorSection,
  GraphExecutor,
  ModelRequestQueue,
  OrchestraRunner,
  Workflow,
  workflowGraph,
  type AgentEngine,
  type ExecutorSettings,
  type GraphContext,
  type WorkflowGraph,
} from '../src/index.js';
import { testWorkerGroups, workerGroupsPlugin } from './fixtures.js';

// Timeouts, failures and cancellation on the executor. The engine is the real tiny model behind a gate: a call waits
// until the test opens the gate, so each timeout fires at a known point instead of racing the model's speed.
let backend: TfjsPolicyBackend;
let workflow: Workflow;
beforeAll(async () => {
  backend = await createTfjsPolicyBackend({ model: 'tiny', seed: 0, runtime: 'wasm' });
  const groups = testWorkerGroups({ solver: backend, verifier: backend }, (b) => b.tokenizer);
  const { kernel } = await createKernel({
    cwd: process.cwd(),
    inline: {
      plugins: [envMathPlugin(), orchestraPlugin(), workerGroupsPlugin(groups)],
      agents: { solver: { sampling: { maxNewTokens: 2 } }, verifier: { sampling: { maxNewTokens: 2 } } },
      env: { name: 'math', levels: [1], testSize: 4 },
    },
  });
  workflow = kernel.get(Workflow);
  await workflow.environment().init();
});
afterAll(() => backend?.dispose());

/** The real engine; each generate call waits for `open()` (all calls pass once it is open). */
class GatedEngine {
  readonly calls: number[] = [];
  private readonly running: Promise<unknown>[] = [];
  private opened = false;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly inner: PolicyBackend) {}
  open(): void {
    this.opened = true;
    for (const release of this.waiting.splice(0)) release();
  }
  /** Resolves once every call let through has returned. */
  async drained(): Promise<void> {
    await Promise.all(this.running);
  }
  engine(): AgentEngine {
    const backend = Object.assign(Object.create(this.inner) as PolicyBackend, {
      generate: async (request: GenerateRequest): Promise<GenerateResult> => {
        this.calls.push(request.prompts.length);
        if (!this.opened) await new Promise<void>((release) => this.waiting.push(release));
        const result = this.inner.generate(request);
        this.running.push(result);
        return result;
      },
    });
    return { workerGroupId: 'policy', backend, codec: this.inner.tokenizer as TextCodec };
  }
}

/** A tool that takes `ms` unless its signal aborts first; counts the aborts it saw (its clean-up). */
function slowTool(ms: number) {
  const seen = { aborted: 0, finished: 0 };
  const call = (_ctx: unknown, signal: AbortSignal) =>
    new Promise<string>((resolve) => {
      const timer = setTimeout(() => {
        seen.finished++;
        resolve('looked up');
      }, ms);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        seen.aborted++;
      });
    });
  return { seen, call };
}

type Overrides = Partial<Omit<ExecutorSettings, 'kind' | 'timeouts'>> & { timeouts?: Partial<ExecutorSettings['timeouts']> };

function executorWith(engine: AgentEngine, graph: WorkflowGraph, settings: Overrides): GraphExecutor {
  const { kind: _kind, ...defaults } = executorSection.parse({});
  return new GraphExecutor({
    environment: workflow.environment(),
    orchestra: { ...createMathOrchestra(), graph },
    agents: workflow.agents(),
    engineFor: () => engine,
    executor: { ...defaults, ...settings, timeouts: { ...defaults.timeouts, ...settings.timeouts } },
  });
}

/** A tool call, then the Solver; the state counts lookups. */
function lookupThenSolve(tool: ReturnType<typeof slowTool>['call']) {
  return workflowGraph(z.object({ lookups: z.number().default(0) }))
    .tool('lookup', 'notes', tool, () => ({ lookups: 1 }))
    .agent('solve', 'solver')
    .start('lookup')
    .edge('lookup', 'solve')
    .edge('solve', END)
    .build();
}

const request = (tasks: number, samplesPerTask = 1) => ({
  tasks: workflow.environment().batch(0, tasks).tasks,
  samplesPerTask,
  seed: 3,
  idPrefix: 's1r0',
});

describe('each timeout fires and is recorded with its reason and partial trace', () => {
  test('LLM call: the Solver waits past llmMs; the lookup is in the trace, the turn is not, and the late sample is dropped', async () => {
    const gate = new GatedEngine(backend);
    const tool = slowTool(1);
    const run = await executorWith(gate.engine(), lookupThenSolve(tool.call), { timeouts: { llmMs: 40 } }).run(request(2));
    expect(run.traces.map((t) => [t.status, t.failure?.reason, t.failure?.node])).toEqual([
      ['failed', 'llm_timeout', 'solve'],
      ['failed', 'llm_timeout', 'solve'],
    ]);
    const trace = run.traces[0]!;
    expect(trace.executions.map((e) => [e.node, e.kind, e.error === undefined])).toEqual([
      ['lookup', 'tool', true],
      ['solve', 'agent', false],
    ]);
    expect(trace.executions[0]).toMatchObject({ stateBefore: { lookups: 0 }, stateAfter: { lookups: 1 }, output: 'looked up' });
    expect(run.executor.failed).toEqual({ llm_timeout: 2 });
    gate.open();
    await new Promise((resolve) => setTimeout(resolve, 0));
    await gate.drained();
    expect(gate.calls).toEqual([2]);
    // failedEpisodes: skip (the default) leaves the trajectory without turns to train, and marks why.
    for (const trajectory of run.trajectories) {
      expect(trajectory.turns).toEqual([]);
      expect(trajectory.outcome).toBe(0);
      expect(trajectory.info?.failure).toMatchObject({ reason: 'llm_timeout' });
    }
  });

  test('tool call: the lookup runs past toolMs and sees its signal abort', async () => {
    const gate = new GatedEngine(backend);
    const tool = slowTool(5_000);
    const run = await executorWith(gate.engine(), lookupThenSolve(tool.call), { timeouts: { toolMs: 30 } }).run(request(1));
    expect(run.traces[0]!.failure).toMatchObject({ reason: 'tool_timeout', node: 'lookup' });
    expect(tool.seen).toEqual({ aborted: 1, finished: 0 });
    expect(gate.calls).toEqual([]);
  });

  test("a tool that throws fails its episode (tool_failed); a DrmasError from a tool is the user's and stops the run", async () => {
    const gate = new GatedEngine(backend);
    const seen: unknown[] = [];
    const failing = lookupThenSolve((ctx) => {
      seen.push((ctx as GraphContext<unknown>).environment);
      return Promise.reject(new Error('index offline'));
    });
    const run = await executorWith(gate.engine(), failing, {}).run(request(1));
    expect(run.traces[0]!.failure).toEqual({ reason: 'tool_failed', message: 'tool notes failed: index offline', node: 'lookup' });
    // The tool saw the run's environment (what a tool node calls the environment's own tools on).
    expect(seen).toEqual([workflow.environment()]);
    const misconfigured = lookupThenSolve(() => Promise.reject(new DrmasError('CONFIG_INVALID', 'this tool needs env.name: code')));
    await expect(executorWith(gate.engine(), misconfigured, {}).run(request(2))).rejects.toThrow('this tool needs env.name: code');
    expect(gate.calls).toEqual([]);
  });

  test('episode: the whole episode runs past episodeMs (no tool limit); batch: the batch runs past batchMs, episodes not started included', async () => {
    const gate = new GatedEngine(backend);
    const tool = slowTool(5_000);
    const episode = await executorWith(gate.engine(), lookupThenSolve(tool.call), { timeouts: { episodeMs: 40 } }).run(request(1));
    expect(episode.traces[0]!.failure).toMatchObject({ reason: 'episode_timeout', node: 'lookup' });
    const batch = await executorWith(gate.engine(), lookupThenSolve(tool.call), { maxInflightEpisodes: 1, timeouts: { batchMs: 40 } }).run(
      request(3),
    );
    expect(batch.traces.map((t) => t.failure?.reason)).toEqual(['batch_timeout', 'batch_timeout', 'batch_timeout']);
    expect(batch.trajectories).toHaveLength(3);
    expect(tool.seen.aborted).toBe(2);
  });

  test('failedEpisodes: train keeps the turns sampled before the failure', async () => {
    const gate = new GatedEngine(backend);
    gate.open();
    // The Solver answers, then the lookup after it runs past toolMs.
    const graph = workflowGraph()
      .agent('solve', 'solver')
      .tool('lookup', 'notes', slowTool(5_000).call)
      .start('solve')
      .edge('solve', 'lookup')
      .build();
    const run = await executorWith(gate.engine(), graph, { failedEpisodes: 'train', timeouts: { toolMs: 30 } }).run(request(1));
    expect(run.traces[0]!.failure?.reason).toBe('tool_timeout');
    expect(run.trajectories[0]!.turns.map((t) => t.agentId)).toEqual(['solver']);
    expect(run.trajectories[0]!.outcome).toBe(0);
  });
});

describe('cancellation frees the episode’s resources', () => {
  test('a queued request whose signal aborts leaves the queue and never reaches the engine', async () => {
    const gate = new GatedEngine(backend);
    const queue = new ModelRequestQueue(gate.engine().backend, { maxBatchSize: 4, maxWaitMs: 0, concurrency: 1 });
    const sampling = { temperature: 1, maxNewTokens: 2 };
    const first = queue.submit({ prompt: [1, 2], sampling, seed: 1, rowKey: 0 });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(queue.inFlight()).toBe(1);
    const controller = new AbortController();
    const second = queue.submit({ prompt: [3, 4], sampling, seed: 1, rowKey: 1, signal: controller.signal });
    expect(queue.pending()).toBe(1);
    controller.abort(new Error('episode timed out'));
    await expect(second).rejects.toThrow('episode timed out');
    expect(queue.pending()).toBe(0);
    gate.open();
    await first;
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(gate.calls).toEqual([1]);
  });

  test('with one episode in flight, a timed-out episode hands its slot to the next, which completes', async () => {
    const gate = new GatedEngine(backend);
    gate.open();
    let lookups = 0;
    // The first lookup hangs; the later ones answer at once.
    const graph = lookupThenSolve((ctx, signal) => (lookups++ === 0 ? slowTool(5_000).call(ctx, signal) : Promise.resolve('quick')));
    const run = await executorWith(gate.engine(), graph, { maxInflightEpisodes: 1, timeouts: { episodeMs: 1_500 } }).run(request(2));
    expect(run.traces.map((t) => t.status)).toEqual(['failed', 'completed']);
    expect(run.trajectories[1]!.turns.map((t) => t.agentId)).toEqual(['solver']);
  });
});

/** The math environment, except that the episodes of `failing` tasks fail at their step as a remote environment's do when their server is down. */
function failingTasks(inner: Environment, failing: ReadonlySet<string>): Environment {
  return {
    name: inner.name,
    maxRounds: inner.maxRounds,
    init: () => inner.init(),
    batch: (cursor, count) => inner.batch(cursor, count),
    test: () => inner.test(),
    reset: (task) => inner.reset(task),
    advance: async (episodes: Episode[], actions: EnvAction[]) => {
      await inner.advance(episodes, actions);
      for (const episode of episodes) {
        if (failing.has(episode.task.id)) Object.assign(episode, { failure: 'server 127.0.0.1:9: down', done: true, outcome: 0 });
      }
    },
  };
}

describe('an episode whose environment failed (Episode.failure)', () => {
  test('is recorded as environment_failed with no turns to train, by the lock-step runner and the executor alike', async () => {
    const gate = new GatedEngine(backend);
    gate.open();
    const tasks = workflow.environment().batch(0, 2).tasks;
    const environment = failingTasks(workflow.environment(), new Set([tasks[1]!.id]));
    const options = {
      environment,
      orchestra: createMathOrchestra(),
      agents: workflow.agents(),
      engineFor: () => gate.engine(),
      settings: { maxLoops: 1 },
    };
    const run = { tasks, samplesPerTask: 1, seed: 3, idPrefix: 's1r0', sampleStreams: 'row' as const };
    const lockStep = await new OrchestraRunner(options).run(run);
    const { kind: _kind, ...executor } = executorSection.parse({});
    const graph = await new GraphExecutor({ ...options, executor }).run(run);
    for (const { trajectories } of [lockStep, graph]) {
      expect(trajectories[0]!.info?.failure).toBeUndefined();
      expect(trajectories[0]!.turns.length).toBeGreaterThan(0);
      expect(trajectories[1]!.info?.failure).toMatchObject({ reason: 'environment_failed', message: 'server 127.0.0.1:9: down' });
      expect(trajectories[1]!.turns).toEqual([]);
      expect(trajectories[1]!.outcome).toBe(0);
    }
    expect(graph.traces.map((t) => t.failure?.node)).toEqual([undefined, 'env.step']);
  });
});
