// Runs of the orchestra plugin on a real engine (the tiny tfjs model), shared by its tests and by the presets' tests of
// their own workflows (which pass the plugin registering them).
import { expect } from '@jest/globals';
import {
  createKernel,
  type GenerateRequest,
  type GenerateResult,
  type Plugin,
  type PolicyBackend,
  type RolloutBatch,
  type TextCodec,
  type Trajectory,
} from '@drmas/core';
import envMathPlugin from '@drmas/plugin-env-math';
import envSearchPlugin from '@drmas/plugin-env-search';
import orchestraPlugin, { executorSection, GraphExecutor, OrchestraRunner, Workflow, type AgentEngine } from '../src/index.js';
import { stepCapture, testRunContext, testWorkerGroups, workerGroupsPlugin } from './fixtures.js';

/** The real engine, counting its generate calls and their rows. */
export class CountingEngine {
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

/** A kernel's config for a run of `roles` on `backend`: env-math, env-search and the orchestra plugin, then `plugins`. */
async function kernelOn(backend: PolicyBackend, roles: string[], config: Record<string, unknown>, plugins: Plugin[]) {
  const groups = testWorkerGroups(Object.fromEntries(roles.map((r) => [r, backend])), (b) => b.tokenizer);
  return createKernel({
    cwd: process.cwd(),
    inline: { plugins: [envMathPlugin(), envSearchPlugin(), orchestraPlugin(), workerGroupsPlugin(groups), ...plugins], ...config },
  });
}

/** The workflow of `orchestra` on `env` (the math environment by default), its environment initialized. */
export async function workflowOf(
  backend: PolicyBackend,
  orchestra: string,
  roles: string[],
  maxNewTokens: number,
  options: { env?: Record<string, unknown>; plugins?: Plugin[] } = {},
): Promise<Workflow> {
  const { kernel } = await kernelOn(
    backend,
    roles,
    {
      agents: Object.fromEntries(roles.map((r) => [r, { sampling: { maxNewTokens } }])),
      orchestra: { name: orchestra, solvers: 2, rounds: 2 },
      env: options.env ?? { name: 'math', levels: [1], testSize: 4 },
    },
    options.plugins ?? [],
  );
  const workflow = kernel.get(Workflow);
  await workflow.environment().init();
  return workflow;
}

const executorOptions = (overrides: Partial<ReturnType<typeof executorSection.parse>> = {}) => {
  const { kind: _kind, ...options } = executorSection.parse({});
  return { ...options, ...overrides };
};

const sampled = (trajectories: Trajectory[]) =>
  trajectories.map((t) => t.turns.map((turn) => [turn.agentId, turn.round, turn.responseIds]));

/** Runs the same episodes in lock-step (row streams) and on the executor, counting each one's generate calls. */
export async function compareRunners(backend: PolicyBackend, workflow: Workflow, tasks: number): Promise<void> {
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

/** One training step's rollout (2 prompts x 2 samples) of `roles` at 16 new tokens each, with `config` and `plugins`. */
export async function rolloutStep(
  backend: PolicyBackend,
  roles: string[],
  config: Record<string, unknown>,
  plugins: Plugin[] = [],
): Promise<RolloutBatch> {
  const capture = stepCapture();
  const { kernel } = await kernelOn(
    backend,
    roles,
    {
      agents: Object.fromEntries(roles.map((r) => [r, { sampling: { maxNewTokens: 16 } }])),
      rollout: { promptsPerStep: 2, samplesPerPrompt: 2 },
      ...config,
    },
    [capture.plugin, ...plugins],
  );
  await kernel.step(testRunContext(kernel), 1);
  return capture.last().rollout;
}

/** Every turn of every trajectory is well formed: ids and log-probs as sampled, text decoded, a reward. */
export function checkTurns(batch: RolloutBatch, codec: TextCodec): void {
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
