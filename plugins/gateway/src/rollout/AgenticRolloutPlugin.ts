import path from 'node:path';
import {
  DrmasError,
  Environment,
  SeededRng,
  Stage,
  WorkerGroups,
  type EnvAction,
  type Episode,
  type ApplyContext,
  type Injected,
  type Plugin,
  type RolloutBatch,
  type RunContext,
  type StepContext,
  type Trajectory,
} from '@drmas/core';
import { StepRollouts, type StepRolloutRequest } from '@drmas/plugin-orchestra';
import { ServedModels } from '../engine/ServedModels.js';
import { SessionError } from '../capture/Sessions.js';
import { GatewayServer } from '../server/GatewayServer.js';
import { loadAgentFunction, type AgentFunction } from './agentFunction.js';
import { gatewaySection, type GatewaySettings } from './gatewayConfig.js';
import { sessionTrajectory } from './sessionTrajectory.js';

export const PLUGIN_NAME = 'gateway';
/** What the agentic rollout's taps use: the trainer's worker groups (their rollout engines) and the orchestra's task draw. */
const SERVICES = { groups: WorkerGroups, rollouts: StepRollouts };
type Services = Injected<typeof SERVICES>;

interface EpisodeSlot {
  task: StepRolloutRequest['tasks'][number];
  episode: Episode;
  groupId: string;
  trajectoryId: string;
  seed: number;
}

/**
 * The agentic rollout (`plugins: ['gateway']`, with the orchestra for the environment, the task draw and the reward
 * allocator): each step's `promptsPerStep` tasks x `samplesPerPrompt` episodes run the user's agent function with a
 * connection to an in-process gateway over the rollout engines, each episode in its own capture session. The answers
 * are scored as the environment scores a final answer, and the captured calls become the step's trajectories, grouped
 * per task, for the usual reward, advantage and update path.
 */
export class AgenticRolloutPlugin implements Plugin {
  readonly name = PLUGIN_NAME;
  readonly configSchema = { gateway: gatewaySection };
  readonly configPaths = ['gateway.agent'];
  private server?: GatewayServer;
  private url?: string;
  private agent?: AgentFunction;

  apply(kernel: ApplyContext): void {
    const services = kernel.inject(SERVICES);
    const settings = () => gatewaySection.parse(kernel.config.gateway ?? {});
    kernel.hooks.validate.tap(PLUGIN_NAME, () => {
      if (settings().agent === undefined) {
        throw new DrmasError('CONFIG_INVALID', 'the gateway plugin runs an agent function per episode, and none is named', {
          key: 'gateway.agent',
          hint: 'set gateway.agent to a module whose default export is (task, connection, context) => Promise<answer>',
        });
      }
    });
    // After the trainer's worker groups (MODEL) and the environment (ENVIRONMENT).
    kernel.hooks.setup.tapPromise({ name: PLUGIN_NAME, stage: Stage.DEFAULT }, async (run) =>
      this.start(kernel, services, settings(), run),
    );
    kernel.hooks.rollout.tapPromise({ name: PLUGIN_NAME, stage: Stage.FIRST }, (step) => this.rollout(kernel, services, settings(), step));
    kernel.hooks.shutdown.tapPromise(PLUGIN_NAME, async () => {
      await this.server?.stop();
      this.server = undefined;
    });
  }

  private async start(kernel: ApplyContext, services: Services, settings: GatewaySettings, run: RunContext): Promise<void> {
    this.agent = await loadAgentFunction(settings.agent!, kernel.cwd);
    const models = new ServedModels(services.groups.all(), { windowMs: settings.batchWindowMs, maxBatch: settings.maxBatch });
    this.server = new GatewayServer(models, { host: '127.0.0.1', port: 0, sessionIdleMs: settings.sessionIdleS * 1000 });
    this.url = await this.server.start();
    run.log(
      `agentic rollout: ${path.basename(settings.agent!)} per episode through the gateway at ${this.url}/v1 (${models.names().join(', ')})`,
    );
  }

  private async rollout(kernel: ApplyContext, services: Services, settings: GatewaySettings, step: StepContext): Promise<RolloutBatch> {
    const server = this.server;
    const agent = this.agent;
    if (!server || !agent || !this.url) throw new Error('the agentic rollout ran before its setup');
    const request = await services.rollouts.draw(step);
    const environment = kernel.getNamed(Environment, kernel.config.env.name, 'env.name');
    const seeds = new SeededRng(request.seed);
    const slots: EpisodeSlot[] = request.tasks.flatMap((task, t) => {
      const groupId = `${request.idPrefix}-p${t}`;
      return Array.from({ length: request.samplesPerTask }, (_, s) => ({
        task,
        episode: environment.reset(task),
        groupId,
        trajectoryId: `${groupId}-n${s}`,
        seed: seeds.fork(`${t}/${s}`).nextUint32(),
      }));
    });
    const agents = Object.keys(kernel.config.agents);
    const answers: string[] = new Array<string>(slots.length).fill('');
    const trajectories: Trajectory[] = new Array<Trajectory>(slots.length);
    const errors: Error[] = [];
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < slots.length; i = next++) {
        const slot = slots[i]!;
        const session = server.sessions.start(slot.task.id);
        try {
          answers[i] = await agent(
            slot.task,
            { baseURL: `${this.url}/${session.id}/v1`, apiKey: 'drmas' },
            { variables: slot.episode.variables(), observation: slot.episode.observation(), seed: slot.seed, sessionId: session.id },
          );
        } catch (error) {
          errors.push(error as Error);
        }
        // A session freed for idling (gateway.sessionIdleS) keeps the turns it recorded in the object held here.
        let turns = session.turns;
        try {
          server.sessions.end(session.id);
          turns = server.sessions.take(session.id).turns;
        } catch (error) {
          if (!(error instanceof SessionError) || error.status !== 404) throw error;
        }
        trajectories[i] = sessionTrajectory(slot.task, slot, turns, agents);
      }
    };
    await Promise.all(Array.from({ length: Math.min(settings.concurrency, slots.length) }, worker));
    if (errors.length === slots.length) {
      throw new DrmasError('PLUGIN_FAILED', `every episode's agent function threw; the first: ${errors[0]!.message}`, {
        key: 'gateway.agent',
        cause: errors[0],
      });
    }
    if (errors.length)
      step.run.log(`agentic rollout: ${errors.length} of ${slots.length} episodes threw (outcome 0); the first: ${errors[0]!.message}`);
    const actions: EnvAction[] = answers.map((content) => ({ type: 'answer', content }));
    await environment.advance(
      slots.map((slot) => slot.episode),
      actions,
    );
    slots.forEach((slot, i) => {
      const trajectory = trajectories[i]!;
      trajectory.done = slot.episode.done;
      trajectory.outcome = slot.episode.outcome;
      trajectory.info = { metrics: slot.episode.metrics(), answer: answers[i] };
    });
    const batch = services.rollouts.batch(step, trajectories);
    step.metrics['rollout/agent_errors'] = errors.length;
    return batch;
  }
}

/** The plugin module's default export: `plugins: ['gateway']`. */
export default function agenticRolloutPlugin(): AgenticRolloutPlugin {
  return new AgenticRolloutPlugin();
}
