import {
  assignParamGroups,
  AUTO_BACKEND,
  DrmasError,
  didYouMean,
  Engines,
  inject,
  injectable,
  ParamGroupError,
  ResolvedConfig,
  rolloutEngineKey,
  rolloutEngineName,
  type BackendFactory,
  type EngineCapability,
  type LoraEngineSettings,
  type PlannedWorkerGroup,
  type PolicyBackend,
  type EnginePurpose,
  type RunContext,
  type WorkerGroup,
  type WorkerGroups,
} from '@drmas/core';
import { describeRolloutChoice, describeTrainingChoice } from './rolloutEngine.js';
import { planWorkerGroups, type WorkerGroupTraining } from './workerGroupPlan.js';
import { agentDiagnosticsSettings, type SpikeGuardSettings } from './config/trainingConfig.js';
import type { TrainerConfig } from './config/trainerSchema.js';

export interface TrainedWorkerGroup extends WorkerGroup {
  /** The engine that trains it: `models.<id>.backend`, or what `auto` chose. */
  engine: string;
  training: WorkerGroupTraining;
  /** Agents with `trainable: false`: their rows leave the loss; a group of only these is never updated. */
  frozenAgents: readonly string[];
  /** A frozen copy of the initial policy, when the loss has a KL term. */
  reference?: PolicyBackend;
}

/**
 * Checks that every param-group pattern names a parameter of the trained model, before any step runs (engines with no
 * parameters, such as a scripted teacher, cannot train and are not checked).
 */
function checkParamGroups(modelId: string, backend: PolicyBackend, training: WorkerGroupTraining): void {
  const names = training.optimizer.paramGroups.length ? backend.parameterNames() : [];
  if (names.length === 0) return;
  try {
    assignParamGroups(names, training.optimizer.paramGroups);
  } catch (cause) {
    if (!(cause instanceof ParamGroupError)) throw cause;
    throw new DrmasError('CONFIG_INVALID', cause.message, {
      key: `models.${modelId}.optimizer.paramGroups.${cause.group}.params`,
      cause,
      hint: cause.hint,
    });
  }
}

/** The spike guard's `rollback` needs an engine that can copy and restore its training state in memory. */
function checkRollback(modelId: string, backend: PolicyBackend, guard: SpikeGuardSettings | undefined): void {
  if (guard?.action !== 'rollback' || (backend.snapshotTraining && backend.restoreTraining)) return;
  throw new DrmasError(
    'CONFIG_INVALID',
    `the ${backend.name} engine of model "${modelId}" cannot snapshot its training state for a rollback`,
    {
      key: `models.${modelId}.spikeGuard.action`,
      hint: 'use action "skip" (the step is dropped before it is applied) or "log", or train this model on tfjs',
    },
  );
}

/** `trainer.agentDiagnostics` measures with updates that apply nothing: an engine that cannot is refused before it trains. */
function checkAgentDiagnostics(modelId: string, backend: PolicyBackend, on: boolean): void {
  if (!on || backend.measuresAgentGradients) return;
  throw new DrmasError(
    'CONFIG_INVALID',
    `the ${backend.name} engine of model "${modelId}" cannot split its gradient by agent or compute one without applying it`,
    { key: 'trainer.agentDiagnostics', hint: 'turn trainer.agentDiagnostics off, or train this model on onnx or tfjs' },
  );
}

/** The run log's line on a group's frozen agents: never updated, or, beside trainable agents, out of the loss only. */
function describeFrozen(id: string, agents: readonly string[], frozen: readonly string[]): string {
  const trained = agents.filter((agent) => !frozen.includes(agent));
  if (trained.length === 0) return `worker group ${id}: every agent is frozen (trainable: false); it samples and is never updated`;
  return (
    `worker group ${id}: agents ${frozen.join(', ')} frozen (trainable: false): their turns leave the loss, but they share ` +
    `model ${id} with ${trained.join(', ')}, whose updates change the weights they sample from (give them a model of their own to keep it fixed)`
  );
}

/**
 * Creates one trainer (and rollout engine, and reference model when needed) per worker group at setup, each engine
 * chosen by the engine service. The trainer's is `models.<id>.backend` (`auto`: the best available engine that trains,
 * with critics or LoRA adapters when the group needs them); the rollout engine is the one `models.<id>.rollout` names
 * (absent: the trainer samples), or with `auto` the best available engine ranked above the trainer's, else the
 * trainer's; the run log says which and why others were passed over.
 */
@injectable()
export class WorkerGroupsService implements WorkerGroups {
  private groups: TrainedWorkerGroup[] = [];
  private readonly byAgent = new Map<string, TrainedWorkerGroup>();
  /** `trainer.roleSwap` at the current step: each role mapped to the role whose model it plays on. */
  private readonly playsAs = new Map<string, string>();

  constructor(
    @inject(ResolvedConfig) private readonly config: TrainerConfig,
    @inject(Engines) private readonly engines: Engines,
  ) {}

  /**
   * Loads every worker group's engines. `samplingOnly` (a rollout worker, which never updates) loads the rollout
   * engine alone, as both the group's trainer and its rollout engine, with no reference model.
   */
  async create(
    run: RunContext,
    options: { reference: boolean; samplingOnly?: boolean; criticGroups?: ReadonlySet<string> },
  ): Promise<void> {
    for (const plan of planWorkerGroups(this.config)) {
      const backendKey = `models.${plan.model}.backend`;
      const settings = { ...plan.settings, seed: plan.settings.seed ?? this.config.trainer.seed } as Record<string, unknown>;
      // A LoRA agent's engine: the factory applies the adapter (on a base shared with the model's other adapters) or refuses it.
      if (plan.lora) {
        const agent = plan.agents[0]!;
        const seed = this.config.trainer.seed * 1_000 + Object.keys(this.config.agents).indexOf(agent);
        const { adapter: _from, ...lora } = plan.lora;
        settings.lora = { ...lora, agent, seed } satisfies LoraEngineSettings;
      }
      const rolloutKey = rolloutEngineKey(plan.model, plan.settings.rollout);
      // A group a critic takes after trains on an engine that has critics, a LoRA agent's on one that trains adapters;
      // `auto` takes the best engine that does it all and trains.
      const needs: EngineCapability[] = [];
      if (!options.samplingOnly && options.criticGroups?.has(plan.id)) needs.push('critic');
      if (plan.lora) needs.push('lora');
      if (!options.samplingOnly && plan.training.optimizer.moments === '8bit') needs.push('moments8bit');
      const trainerChoice = await this.engines.select({
        name: plan.settings.backend,
        key: backendKey,
        settings,
        needs: plan.settings.backend === AUTO_BACKEND ? ['train', ...needs] : needs,
      });
      if (plan.settings.backend === AUTO_BACKEND) run.log(describeTrainingChoice(plan.id, trainerChoice, plan.model));
      const trainerName = trainerChoice.name;
      const factories = new Map<string, BackendFactory>([[trainerName, trainerChoice.factory]]);
      let rolloutName = rolloutEngineName(plan.settings.rollout);
      // A LoRA agent samples on its trainer, which holds the adapter.
      if (plan.lora && rolloutName === AUTO_BACKEND) rolloutName = trainerName;
      if (rolloutName !== undefined && rolloutName !== trainerName) {
        const choice = await this.engines.select({
          name: rolloutName,
          key: rolloutKey,
          settings,
          needs: ['sample'],
          loadedOn: trainerName,
        });
        if (rolloutName === AUTO_BACKEND) run.log(describeRolloutChoice(plan.id, choice, trainerName, plan.model));
        rolloutName = choice.name;
        factories.set(rolloutName, choice.factory);
      }
      const make = (name: string, purpose?: EnginePurpose) => factories.get(name)!.create({ modelId: plan.model, settings, run, purpose });
      if (plan.lora && rolloutName && rolloutName !== trainerName) {
        throw new DrmasError(
          'CONFIG_INVALID',
          `agent "${plan.agents[0]}" trains a LoRA adapter, which its trainer (${trainerName}) also samples with`,
          {
            key: rolloutKey,
            hint: `remove models.${plan.model}.rollout (or set it to ${trainerName}): a separate rollout engine takes merged weights, not an adapter`,
          },
        );
      }
      if (options.samplingOnly) {
        const engine = await make(rolloutName ?? trainerName);
        if (plan.lora?.adapter) await startFromAdapter(engine, plan.lora.adapter, plan.agents[0]!);
        this.add({
          id: plan.id,
          agents: plan.agents,
          engine: trainerName,
          trainer: engine,
          rollout: engine,
          codec: engine.tokenizer,
          training: plan.training,
          frozenAgents: plan.frozenAgents,
        });
        run.log(`worker group ${plan.id}: agents ${plan.agents.join(', ')}; samples on ${engine.name} (${engine.runtime})`);
        continue;
      }
      const trainer = await make(trainerName);
      try {
        checkParamGroups(plan.model, trainer, plan.training);
        checkRollback(plan.model, trainer, plan.settings.spikeGuard as SpikeGuardSettings | undefined);
        checkAgentDiagnostics(plan.model, trainer, agentDiagnosticsSettings(this.config.trainer) !== undefined);
      } catch (error) {
        trainer.dispose();
        throw error;
      }
      if (plan.lora?.adapter) await startFromAdapter(trainer, plan.lora.adapter, plan.agents[0]!);
      let rollout = trainer;
      if (rolloutName && rolloutName !== trainerName) {
        rollout = await make(rolloutName);
        await rollout.syncWeights(trainer);
      }
      // A group of frozen agents never computes a loss, so it needs no reference model.
      const trains = plan.frozenAgents.length < plan.agents.length;
      const reference = options.reference && trains ? await make(trainerName, 'reference') : undefined;
      const group: TrainedWorkerGroup = {
        id: plan.id,
        agents: plan.agents,
        engine: trainerName,
        trainer,
        rollout,
        reference,
        codec: trainer.tokenizer,
        training: plan.training,
        frozenAgents: plan.frozenAgents,
      };
      this.add(group);
      run.log(
        `worker group ${plan.id}: agents ${plan.agents.join(', ')}; trains on ${trainer.name} (${trainer.runtime})` +
          (rollout !== trainer ? `, samples on ${rollout.name} (${rollout.runtime})` : ''),
      );
      if (plan.frozenAgents.length) run.log(describeFrozen(plan.id, plan.agents, plan.frozenAgents));
      const dropped = (this.config.models[plan.model]!.optimizer as { paramGroups?: unknown[] } | undefined)?.paramGroups?.length;
      if (plan.lora && dropped) {
        run.log(`worker group ${plan.id}: models.${plan.model}.optimizer.paramGroups left out: they name the frozen base's tensors`);
      }
    }
  }

  private add(group: TrainedWorkerGroup): void {
    this.groups.push(group);
    for (const agent of group.agents) this.byAgent.set(agent, group);
  }

  ids(): string[] {
    return planWorkerGroups(this.config).map((plan) => plan.id);
  }

  planned(): PlannedWorkerGroup[] {
    return planWorkerGroups(this.config).map(({ id, model, agents, lora }) => ({
      id,
      model,
      agents,
      ...(lora ? { lora: { agent: agents[0]!, adapter: lora.adapter } } : {}),
    }));
  }

  createForSampling(run: RunContext): Promise<void> {
    return this.create(run, { reference: false, samplingOnly: true });
  }

  all(): TrainedWorkerGroup[] {
    return this.groups;
  }

  get(id: string): TrainedWorkerGroup {
    const group = this.groups.find((g) => g.id === id);
    if (!group) {
      throw new DrmasError('UNKNOWN_NAME', `no worker group "${id}"`, {
        key: 'models',
        hint:
          didYouMean(
            id,
            this.groups.map((g) => g.id),
          ).trim() || 'worker groups are the model ids agents use',
      });
    }
    return group;
  }

  /** CORY's role exchange: with `swapped`, each of the two roles samples and trains on the other's model. */
  swapRoles(roles: readonly [string, string], swapped: boolean): void {
    this.playsAs.clear();
    if (!swapped) return;
    this.playsAs.set(roles[0], roles[1]);
    this.playsAs.set(roles[1], roles[0]);
  }

  /** The group whose model plays `agentId` now: its own, or under a role swap the other role's. */
  forAgent(agentId: string): TrainedWorkerGroup {
    const group = this.byAgent.get(this.playsAs.get(agentId) ?? agentId);
    if (!group) {
      throw new DrmasError('CONFIG_INVALID', `agent "${agentId}" has no model: it is not listed under \`agents\``, {
        key: `agents.${agentId}`,
        hint: `add agents.${agentId} = { model: "<model id>" }${didYouMean(agentId, [...this.byAgent.keys()])}`,
      });
    }
    return group;
  }

  dispose(): void {
    for (const group of this.groups) {
      group.trainer.dispose();
      if (group.rollout !== group.trainer) group.rollout.dispose();
      group.reference?.dispose();
    }
    this.groups = [];
    this.byAgent.clear();
  }
}

/** `agents.<role>.lora.adapter`: the engine's adapter starts as the saved one (its optimizer afresh). */
async function startFromAdapter(engine: PolicyBackend, dir: string, agent: string): Promise<void> {
  try {
    await engine.load(dir, { optimizer: false });
  } catch (error) {
    engine.dispose();
    throw DrmasError.is(error) ? error.at(`agents.${agent}.lora.adapter`) : error;
  }
}
