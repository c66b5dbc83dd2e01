import {
  AgentRegistry,
  AnswerFormat,
  DrmasError,
  Environment,
  inject,
  injectable,
  ResolvedConfig,
  Contributions,
  WorkerGroups,
  type WorkerGroup,
} from '@drmas/core';
import type { Agent } from '../agents/Agent.js';
import { mergeAgentOptions } from '../agents/agentConfig.js';
import { PromptedAgent } from '../agents/PromptedAgent.js';
import { Orchestra } from '../orchestras/Orchestra.js';
import { OrchestraRunner, type AgentEngine, type EpisodeRunner } from '../rollout/OrchestraRunner.js';
import { GraphExecutor } from '../executor/GraphExecutor.js';
import type { OrchestraConfig } from './orchestraSchema.js';

/** The engine an agent samples from: its worker group's rollout engine and the model's tokenizer. */
function engineOf(group: WorkerGroup, agentId: string): AgentEngine {
  const codec = group.codec ?? group.rollout.tokenizer;
  if (!codec) {
    throw new DrmasError('CONFIG_INVALID', `model "${group.id}" of agent "${agentId}" has no tokenizer, so prompts cannot be encoded`, {
      key: `models.${group.id}.model`,
      hint: 'use a checkpoint folder with tokenizer.json, or a built-in model (tiny, small)',
    });
  }
  return { workerGroupId: group.id, backend: group.rollout, codec };
}

/**
 * The configured workflow of a run: the Environment named by `env.name`, the Orchestra named by `orchestra.name`, its
 * agents built from the orchestra's defaults and `agents.<role>` (a role no plugin registers a class for is a plain
 * `PromptedAgent`), the AnswerFormat named by `orchestra.answerFormat` (for runners that compare answers), and the
 * runner that plays episodes on the worker groups' rollout engines. Each is resolved once, on first use.
 */
@injectable()
export class Workflow {
  private agentsRef?: ReadonlyMap<string, Agent>;
  private runnerRef?: EpisodeRunner;
  private answerFormatRef?: AnswerFormat;

  constructor(
    @inject(ResolvedConfig) private readonly config: OrchestraConfig,
    @inject(Contributions) private readonly contributions: Contributions,
    @inject(AgentRegistry) private readonly registry: AgentRegistry,
  ) {}

  environment(): Environment {
    return this.contributions.getNamed(Environment, this.config.env.name, 'env.name');
  }

  orchestra(): Orchestra {
    return this.contributions.getNamed(Orchestra, this.config.orchestra.name, 'orchestra.name');
  }

  agents(): ReadonlyMap<string, Agent> {
    this.agentsRef ??= new Map(
      Object.entries(this.orchestra().agents).map(([role, defaults]) => {
        const options = mergeAgentOptions(defaults, this.config.agents[role]);
        const agent = this.registry.has(role)
          ? this.registry.create<Agent>(role, options, `agents.${role}`)
          : new PromptedAgent({ ...options, role });
        return [role, agent];
      }),
    );
    return this.agentsRef;
  }

  /** How answers compare where a runner votes over them (`majority_vote`, `debate`): `orchestra.answerFormat`. */
  answerFormat(): AnswerFormat {
    this.answerFormatRef ??= this.contributions.getNamed(AnswerFormat, this.config.orchestra.answerFormat, 'orchestra.answerFormat');
    return this.answerFormatRef;
  }

  /** The agent's invalid-turn penalty (what the reward allocators subtract). */
  invalidPenalty(agentId: string): number {
    return this.agents().get(agentId)?.invalidPenalty ?? 0;
  }

  /** The runner `rollout.executor.kind` names: the lock-step `OrchestraRunner` or the async `GraphExecutor`. */
  runner(): EpisodeRunner {
    if (!this.runnerRef) {
      // Worker groups exist once the trainer's setup ran; they are looked up then, not when the workflow is built.
      const groups = this.contributions.get(WorkerGroups, { requester: 'orchestra' });
      const engines = new Map<string, AgentEngine>();
      const options = {
        environment: this.environment(),
        orchestra: this.orchestra(),
        agents: this.agents(),
        settings: this.config.orchestra,
        // Looked up on every call, cached per worker group: the trainer's role swap (CORY) moves a role to another model.
        engineFor: (agentId: string) => {
          const group = groups.forAgent(agentId);
          let engine = engines.get(group.id);
          if (!engine) {
            engine = engineOf(group, agentId);
            engines.set(group.id, engine);
          }
          return engine;
        },
      };
      const { executor } = this.config.rollout;
      this.runnerRef = executor.kind === 'async' ? new GraphExecutor({ ...options, executor }) : new OrchestraRunner(options);
    }
    return this.runnerRef;
  }
}
