import {
  BatchInputSource, Checkpointable, DrmasError, Environment, InfoSection, SeededRng, Stage, WorkerGroups, type Kernel, type Plugin, type RegisterContext,
  type EnvTask, type ResolvedConfig, type RngState, type RolloutBatch, type StepContext,
} from '@drmas/core';
import { GreedyBaselineSource, observationSource } from '../rollout/batchInputs.js';
import type { Agent } from '../agents/Agent.js';
import { agentEntrySchema, mergeAgentOptions } from '../agents/agentConfig.js';
import { ROLE_AGENTS } from '../agents/RoleAgents.js';
import { createMathOrchestra } from '../orchestras/MathOrchestra.js';
import { Orchestra } from '../orchestras/Orchestra.js';
import { createSearchOrchestra } from '../orchestras/SearchOrchestra.js';
import { RewardAllocationPlugin } from '../reward/RewardAllocationPlugin.js';
import { EvaluationTaps, evalSection } from '../evaluation/EvaluationTaps.js';
import { EpisodeRunner, OrchestraRunner, type AgentEngine } from '../rollout/OrchestraRunner.js';
import { rolloutMetrics } from '../rollout/rolloutMetrics.js';
import { orchestraSection, rewardSection, rolloutSection, type OrchestraSettings, type RolloutSettings } from './orchestraConfig.js';

const PLUGIN_NAME = 'orchestra';

/** What a checkpoint needs to continue the task stream and the sampling seeds exactly. */
export interface OrchestraState {
  cursor: number;
  rollouts: number;
  rng: RngState;
}

/**
 * Provides the built-in agents, orchestras (`math`, `search`) and reward allocators, and taps `rollout`: each step
 * draws `rollout.promptsPerStep` tasks from the Environment named by `env.name` (provided by an environment
 * plugin), runs `rollout.samplesPerPrompt` episodes of each through the orchestra named by `orchestra.name`, and
 * returns the trajectories.
 */
export class OrchestraPlugin implements Plugin {
  readonly name = PLUGIN_NAME;
  readonly configSchema = {
    orchestra: orchestraSection, rollout: rolloutSection, reward: rewardSection, agents: agentEntrySchema, eval: evalSection,
  };
  private readonly evaluation = new EvaluationTaps(() => this.environment(), () => this.runner());
  private readonly rewards = new RewardAllocationPlugin((agentId) => this.invalidPenalty(agentId));
  private kernelRef?: Kernel;
  private agentsRef?: Map<string, Agent>;
  private runnerRef?: OrchestraRunner;
  private cursor = 0;
  private rollouts = 0;
  private rng?: SeededRng;
  /** The tasks drawn by the current step's rollouts (greedy baselines run them again). */
  private readonly stepTasks = new Map<string, EnvTask>();

  register(ctx: RegisterContext): void {
    ctx.provide(BatchInputSource, 'observations', observationSource);
    ctx.provide(BatchInputSource, 'baselineRewards', new GreedyBaselineSource(() => this.runner(), (id) => this.stepTasks.get(id)));
    for (const role of ROLE_AGENTS) ctx.agents.register(role);
    ctx.provide(Orchestra, 'math', createMathOrchestra());
    ctx.provide(Orchestra, 'search', createSearchOrchestra());
    ctx.bind(EpisodeRunner).toDynamicValue(() => this.runner());
    ctx.bind(InfoSection).toConstantValue({
      title: 'workflow',
      describe: () => ({
        orchestra: (this.config().orchestra as OrchestraSettings).name,
        agents: Object.keys(this.orchestra().agents),
        environment: this.config().env.name,
        promptsPerStep: (this.config().rollout as RolloutSettings).promptsPerStep,
        samplesPerPrompt: (this.config().rollout as RolloutSettings).samplesPerPrompt,
        rewardAllocator: (this.config().reward as { allocator: string }).allocator,
      }),
    });
    ctx.bind(Checkpointable).toConstantValue({
      key: PLUGIN_NAME, getState: () => this.getState(), setState: (state) => this.setState(state as OrchestraState),
    });
    this.rewards.register(ctx);
  }

  apply(kernel: Kernel): void {
    this.kernelRef = kernel;
    kernel.hooks.validate.tap(PLUGIN_NAME, () => {
      this.environment();
      this.agents();
    });
    kernel.hooks.setup.tapPromise({ name: PLUGIN_NAME, stage: Stage.ENVIRONMENT }, async () => {
      await this.environment().init();
    });
    kernel.hooks.beforeStep.tap(PLUGIN_NAME, () => { this.stepTasks.clear(); });
    kernel.hooks.rollout.tapPromise(PLUGIN_NAME, (step) => this.rollout(step));
    this.rewards.apply(kernel);
    this.evaluation.apply(kernel);
  }

  /** One rollout: the next tasks of the training source, n episodes each, as a RolloutBatch. */
  async rollout(step: StepContext): Promise<RolloutBatch> {
    const environment = this.environment();
    await environment.init();
    const { promptsPerStep, samplesPerPrompt } = this.config().rollout as RolloutSettings;
    const { tasks, nextCursor } = environment.batch(this.cursor, promptsPerStep);
    this.cursor = nextCursor;
    for (const task of tasks) this.stepTasks.set(task.id, task);
    const round = this.rollouts++;
    const run = await this.runner().run({
      tasks, samplesPerTask: samplesPerPrompt, seed: this.random().nextUint32(), idPrefix: `s${step.step}r${round}`,
    });
    const metrics = rolloutMetrics(run.trajectories);
    Object.assign(step.metrics, metrics);
    return { trajectories: run.trajectories, metrics };
  }

  getState(): OrchestraState {
    return { cursor: this.cursor, rollouts: this.rollouts, rng: this.random().getState() };
  }

  setState(state: OrchestraState): void {
    this.cursor = state.cursor;
    this.rollouts = state.rollouts;
    this.random().setState(state.rng);
  }

  /** The agents of the configured orchestra, built from its defaults and `agents.<role>`. */
  agents(): ReadonlyMap<string, Agent> {
    if (!this.agentsRef) {
      const kernel = this.kernel();
      const orchestra = this.orchestra();
      this.agentsRef = new Map(Object.entries(orchestra.agents).map(([role, defaults]) => [
        role, kernel.agents.create<Agent>(role, mergeAgentOptions(defaults, kernel.config.agents[role]), `agents.${role}`),
      ]));
    }
    return this.agentsRef;
  }

  orchestra(): Orchestra {
    return this.kernel().getNamed(Orchestra, (this.config().orchestra as OrchestraSettings).name, 'orchestra.name');
  }

  environment(): Environment {
    return this.kernel().getNamed(Environment, this.config().env.name, 'env.name');
  }

  /** The runner of the configured orchestra, on the worker groups' rollout engines. */
  runner(): OrchestraRunner {
    if (!this.runnerRef) {
      const kernel = this.kernel();
      const groups = kernel.get(WorkerGroups, { requester: PLUGIN_NAME });
      const engines = new Map<string, AgentEngine>();
      this.runnerRef = new OrchestraRunner({
        environment: this.environment(),
        orchestra: this.orchestra(),
        agents: this.agents(),
        settings: this.config().orchestra as OrchestraSettings,
        engineFor: (agentId) => {
          let engine = engines.get(agentId);
          if (!engine) {
            engine = engineOf(groups, agentId);
            engines.set(agentId, engine);
          }
          return engine;
        },
      });
    }
    return this.runnerRef;
  }

  private invalidPenalty(agentId: string): number {
    return this.agents().get(agentId)?.invalidPenalty ?? 0;
  }

  private random(): SeededRng {
    this.rng ??= new SeededRng(this.config().trainer.seed).fork('orchestra');
    return this.rng;
  }

  private config(): ResolvedConfig {
    return this.kernel().config;
  }

  private kernel(): Kernel {
    if (!this.kernelRef) throw new Error(`plugin "${PLUGIN_NAME}" used before the kernel applied it`);
    return this.kernelRef;
  }
}

function engineOf(groups: WorkerGroups, agentId: string): AgentEngine {
  const group = groups.forAgent(agentId);
  const codec = group.codec ?? group.rollout.tokenizer;
  if (!codec) {
    throw new DrmasError('CONFIG_INVALID', `model "${group.id}" of agent "${agentId}" has no tokenizer, so prompts cannot be encoded`, {
      key: `models.${group.id}.model`, hint: 'use a checkpoint folder with tokenizer.json, or a built-in model (tiny, small)',
    });
  }
  return { workerGroupId: group.id, backend: group.rollout, codec };
}

/** The plugin module's default export: `plugins: ['orchestra']`. */
export default function orchestraPlugin(): OrchestraPlugin {
  return new OrchestraPlugin();
}
