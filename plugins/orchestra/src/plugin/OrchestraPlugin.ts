import {
  BatchInputSource,
  DrmasError,
  Checkpointable,
  MemoryEstimates,
  type MemoryEstimateReport,
  InfoSection,
  resolveMemoryBudget,
  RunFile,
  Rollouts,
  type RerunRequest,
  SeededRng,
  Stage,
  type EnvTask,
  type ApplyContext,
  type Injected,
  type Plugin,
  type RegisterContext,
  type RngState,
  type RolloutBatch,
  type StepContext,
  type Trajectory,
} from '@drmas/core';
import { GreedyBaselineSource, observationSource } from '../rollout/batchInputs.js';
import { ROLE_AGENTS } from '../agents/RoleAgents.js';
import { configGraphOrchestra } from '../graph/graphConfig.js';
import { createCoryOrchestra } from '../orchestras/CoryOrchestra.js';
import { createMathOrchestra } from '../orchestras/MathOrchestra.js';
import { createDebateOrchestra } from '../orchestras/DebateOrchestra.js';
import { createMajorityVoteOrchestra, createSummaryOrchestra } from '../orchestras/VoteOrchestras.js';
import { Orchestra } from '../orchestras/Orchestra.js';
import { Workflow } from './Workflow.js';
import { RewardAllocationPlugin } from '../reward/RewardAllocationPlugin.js';
import { EvaluationTaps } from '../evaluation/EvaluationTaps.js';
import { EpisodeRunner } from '../rollout/OrchestraRunner.js';
import { rolloutMetrics } from '../rollout/rolloutMetrics.js';
import { orchestraSchema, type OrchestraConfig } from './orchestraSchema.js';
import {
  agentLimits,
  checkAgentRoles,
  checkRunnerRoles,
  checkEvalTasks,
  checkMemory,
  checkPositions,
  turnsPerEpisode,
} from './rolloutLimits.js';
import { checkRolloutWorkers, otherRolloutTaps, sampleStreamsOf } from './rolloutWorkers.js';
import { checkExecutor } from './executorChecks.js';
import { executorMetrics } from '../executor/executorMetrics.js';
import { appendTraces, TRACES_FILE } from '../trace/traceFile.js';
import { StepRollouts, type StepRolloutRequest } from './StepRollouts.js';

const PLUGIN_NAME = 'orchestra';
const ORCHESTRA_SERVICES = { workflow: Workflow, rollouts: Rollouts };

/** What a checkpoint needs to continue the task stream and the sampling seeds exactly. */
export interface OrchestraState {
  cursor: number;
  rollouts: number;
  rng: RngState;
}

/**
 * Provides the built-in agents, orchestras (`math`, `cory`, MAVERL's runners `majority_vote`, `summary`, `debate`,
 * and `graph` from the config) and reward allocators, and taps `rollout`: each step
 * draws `rollout.promptsPerStep` tasks from the Environment named by `env.name` (provided by an environment
 * plugin), runs `rollout.samplesPerPrompt` episodes of each through the orchestra named by `orchestra.name`, and
 * returns the trajectories.
 */
export class OrchestraPlugin implements Plugin<unknown, typeof orchestraSchema> {
  readonly name = PLUGIN_NAME;
  readonly configSchema = orchestraSchema;
  private readonly evaluation = new EvaluationTaps(() => this.workflow());
  private readonly rewards = new RewardAllocationPlugin((agentId) => this.workflow().invalidPenalty(agentId));
  /**
   * The orchestra's features that are plugins of their own, registered and applied after its own bindings and taps:
   * the reward allocators (`orchestra:reward`) and evaluation on the held-out split (`orchestra:evaluate`).
   */
  private readonly builtins: ReadonlyArray<Pick<Plugin<unknown, typeof orchestraSchema>, 'name' | 'register' | 'apply'>> = [
    this.rewards,
    this.evaluation,
  ];
  private kernelRef?: ApplyContext<OrchestraConfig>;
  /** What the orchestra's taps use, injected at `apply`: the run's workflow and the kernel's rollouts. */
  private services?: Injected<typeof ORCHESTRA_SERVICES>;
  private cursor = 0;
  private rollouts = 0;
  private rng?: SeededRng;
  /** What the validate hook estimated a training step and an evaluation batch hold (`MemoryEstimates`). */
  private memoryEstimates: MemoryEstimateReport[] = [];
  /** The tasks drawn by the current step's rollouts (greedy baselines run them again). */
  private readonly stepTasks = new Map<string, EnvTask>();
  /** MAVERL's runners: orchestras that call every role they declare (so each needs an `agents` entry). */
  private readonly runners = new Set<Orchestra>();
  /** The orchestras that compare answers (so need `orchestra.answerFormat`). */
  private readonly comparingAnswers = new Set<Orchestra>();

  register(ctx: RegisterContext<OrchestraConfig>): void {
    for (const role of ROLE_AGENTS) ctx.agents.register(role);
    const settings = ctx.config.orchestra;
    const answers = () => this.workflow().answerFormat();
    const majority = createMajorityVoteOrchestra(answers);
    const debate = createDebateOrchestra({ debaters: settings.debaters, judge: settings.judge, answers });
    for (const runner of [majority, createSummaryOrchestra(), debate]) this.runners.add(runner);
    for (const comparing of [majority, debate]) this.comparingAnswers.add(comparing);
    for (const orchestra of [createMathOrchestra(), createCoryOrchestra(), ...this.runners])
      ctx.provide(Orchestra, orchestra.name, orchestra);
    // `orchestra.graph` (the config form) as the orchestra `graph`.
    if (settings.graph) ctx.provide(Orchestra, 'graph', configGraphOrchestra(settings.graph));
    ctx.bind(Workflow).toSelf().inSingletonScope();
    ctx.bind(EpisodeRunner).toDynamicValue((context) => context.get(Workflow).runner());
    ctx.bind(RunFile).toConstantValue({ path: 'eval.jsonl', kind: 'steps' });
    if (ctx.config.rollout.executor.kind === 'async') ctx.bind(RunFile).toConstantValue({ path: TRACES_FILE, kind: 'steps' });
    ctx
      .bind(StepRollouts)
      .toConstantValue({ draw: (step) => this.draw(step), batch: (step, trajectories) => this.batch(step, trajectories) });
    ctx.provide(BatchInputSource, 'observations', observationSource);
    ctx.provide(BatchInputSource, 'baselineRewards', new GreedyBaselineSource(() => this.injected().rollouts));
    ctx.bind(InfoSection).toConstantValue({
      title: 'workflow',
      describe: () => ({
        orchestra: ctx.config.orchestra.name,
        agents: Object.keys(this.workflow().orchestra().agents),
        environment: ctx.config.env.name,
        promptsPerStep: ctx.config.rollout.promptsPerStep,
        samplesPerPrompt: ctx.config.rollout.samplesPerPrompt,
        rewardAllocator: ctx.config.reward.allocator,
      }),
    });
    ctx.bind(MemoryEstimates).toConstantValue({ estimates: () => this.memoryEstimates });
    ctx.bind(Checkpointable).toConstantValue({
      key: PLUGIN_NAME,
      getState: () => this.getState(),
      setState: (state) => this.setState(state as OrchestraState),
    });
    for (const builtin of this.builtins) builtin.register?.(ctx);
  }

  apply(kernel: ApplyContext<OrchestraConfig>): void {
    this.kernelRef = kernel;
    this.services = kernel.inject(ORCHESTRA_SERVICES);
    kernel.hooks.validate.tap(PLUGIN_NAME, () => {
      const { config } = kernel;
      const workflow = this.workflow();
      const environment = workflow.environment();
      const orchestra = workflow.orchestra();
      checkAgentRoles(config, orchestra, (key) => kernel.originOf(key));
      if (this.runners.has(orchestra)) checkRunnerRoles(config, orchestra);
      if (this.comparingAnswers.has(orchestra)) workflow.answerFormat();
      checkExecutor(config.rollout, config.reward, orchestra);
      checkRolloutWorkers(config.rollout, otherRolloutTaps(kernel));
      const budget = resolveMemoryBudget(config, kernel);
      const limits = agentLimits(config, workflow.agents(), kernel, budget);
      checkPositions(limits);
      const turns = turnsPerEpisode(limits.length, config.orchestra, environment.maxRounds);
      this.memoryEstimates = checkMemory(config, limits, turns, budget);
    });
    kernel.hooks.setup.tapPromise({ name: PLUGIN_NAME, stage: Stage.ENVIRONMENT }, async () => {
      const environment = this.workflow().environment();
      await environment.init();
      // The held-out split's size is known once it is loaded: before training, not at the evaluation after it.
      const { eval: evaluation, env } = kernel.config;
      if (evaluation.atStart || evaluation.atEnd || evaluation.every > 0) {
        checkEvalTasks(evaluation, environment.test().length, env.name ?? '(unnamed)');
      }
    });
    kernel.hooks.beforeStep.tap(PLUGIN_NAME, () => {
      this.stepTasks.clear();
    });
    kernel.hooks.rollout.tapPromise(PLUGIN_NAME, (step) => this.rollout(step));
    kernel.hooks.rerun.tapPromise(PLUGIN_NAME, (request, step) => this.rerun(request, step));
    for (const builtin of this.builtins) builtin.apply?.(kernel);
  }

  /** One rollout: the next tasks of the training source, n episodes each, as a RolloutBatch. */
  async rollout(step: StepContext): Promise<RolloutBatch> {
    const run = await this.workflow()
      .runner()
      .run(await this.draw(step));
    // The async executor's traces go to traces.jsonl, its queue figures and failures to the metrics.
    if (run.traces) appendTraces(step.run.runDir, step.step, run.traces);
    if (run.executor) Object.assign(step.metrics, executorMetrics(run.executor, this.kernel().config.rollout.executor.maxBatchSize));
    return this.batch(step, run.trajectories);
  }

  /** Episodes of tasks this step's rollouts drew, run again as `request` says (ReMax's greedy baselines). */
  async rerun(request: RerunRequest, step: StepContext): Promise<RolloutBatch> {
    const tasks = request.taskIds.map((id) => {
      const task = this.stepTasks.get(id);
      if (task) return task;
      throw new DrmasError(
        'PLUGIN_INVALID',
        `a plugin asked to run task ${id} again at step ${step.step}, which this step's rollouts did not draw`,
        {
          hint: "ask Rollouts.rerun for the ids of the step's own trajectories (Trajectory.taskId)",
        },
      );
    });
    const run = await this.workflow()
      .runner()
      .run({
        tasks,
        samplesPerTask: request.samplesPerTask,
        seed: request.seed,
        idPrefix: `s${step.step}${request.label}`,
        ...(request.sampling && { sampling: request.sampling }),
      });
    return { trajectories: run.trajectories, metrics: {} };
  }

  /**
   * The next tasks of the training source and the rollout's seed; advances the task cursor and the orchestra's
   * random stream (so it is called once per rollout, in-process or on workers alike).
   */
  async draw(step: StepContext): Promise<StepRolloutRequest> {
    const environment = this.workflow().environment();
    await environment.init();
    const settings = this.kernel().config.rollout;
    await environment.prepare?.(this.cursor, settings.promptsPerStep);
    const { tasks, nextCursor } = environment.batch(this.cursor, settings.promptsPerStep);
    this.cursor = nextCursor;
    for (const task of tasks) this.stepTasks.set(task.id, task);
    const rolloutIndex = this.rollouts++;
    return {
      tasks,
      samplesPerTask: settings.samplesPerPrompt,
      seed: this.random().nextUint32(),
      idPrefix: `s${step.step}r${rolloutIndex}`,
      rolloutIndex,
      sampleStreams: sampleStreamsOf(settings),
    };
  }

  /** The step's RolloutBatch from its trajectories (in task order), with the rollout metrics added to the step's. */
  batch(step: StepContext, trajectories: Trajectory[]): RolloutBatch {
    const metrics = rolloutMetrics(trajectories);
    Object.assign(step.metrics, metrics);
    return { trajectories, metrics };
  }

  getState(): OrchestraState {
    return { cursor: this.cursor, rollouts: this.rollouts, rng: this.random().getState() };
  }

  setState(state: OrchestraState): void {
    this.cursor = state.cursor;
    this.rollouts = state.rollouts;
    this.random().setState(state.rng);
  }

  /** The run's workflow: environment, orchestra, agents and runner. */
  workflow(): Workflow {
    return this.injected().workflow;
  }

  private random(): SeededRng {
    this.rng ??= new SeededRng(this.kernel().config.trainer.seed).fork('orchestra');
    return this.rng;
  }

  private injected(): Injected<typeof ORCHESTRA_SERVICES> {
    if (!this.services) throw new Error(`plugin "${PLUGIN_NAME}" used before the kernel applied it`);
    return this.services;
  }

  private kernel(): ApplyContext<OrchestraConfig> {
    if (!this.kernelRef) throw new Error(`plugin "${PLUGIN_NAME}" used before the kernel applied it`);
    return this.kernelRef;
  }
}

/** The plugin module's default export: `plugins: ['orchestra']`. */
export default function orchestraPlugin(): OrchestraPlugin {
  return new OrchestraPlugin();
}
