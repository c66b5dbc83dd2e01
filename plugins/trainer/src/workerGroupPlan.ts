import type { LoraSection } from './config/loraConfig.js';
import { DrmasError, didYouMean, type OptimizerSettings, type ResolvedConfig } from '@drmas/core';
import type { OptimizerSection, ScheduleKind, TrainOverrides } from './config/trainingConfig.js';

/** A worker group's training settings: its model's optimizer with the agents' shared overrides applied. */
export interface WorkerGroupTraining {
  optimizer: OptimizerSettings;
  schedule: { kind: ScheduleKind; warmupSteps: number };
  /** Rows per micro-batch (gradient accumulation). */
  microBatchSize: number;
  /** Padded tokens per micro-batch at most (`agents.<role>.train.microBatchTokens`); unset: rows alone. */
  microBatchTokens?: number;
  /** Optimizer steps per training step: the group's rows are split into this many mini-batches. */
  miniBatches: number;
  /** Passes over the group's rows per training step (PPO epochs). */
  epochs: number;
}

/** What a worker group will be: its model settings and the agents (and their shared training settings). */
export interface WorkerGroupPlan {
  id: string;
  /** The model id (under `models`): `id` itself, except for a LoRA agent's group. */
  model: string;
  /** The LoRA adapter this group trains on its model's frozen base (`agents.<role>.lora` of its one agent). */
  lora?: LoraSection;
  agents: string[];
  /** The agents with `trainable: false`: they sample, but their rows never reach the loss. */
  frozenAgents: string[];
  settings: ResolvedConfig['models'][string];
  training: WorkerGroupTraining;
}

const DEFAULTS = { microBatchSize: 8, miniBatches: 1, epochs: 1 };

/** The worker group of a LoRA agent: `<model>@<role>` (its checkpoint folder, its metrics' group). */
export function loraGroupId(model: string, agent: string): string {
  return `${model}@${agent}`;
}

/**
 * Maps agents onto models (DESIGN §5): agents on one model id share a worker group, which requires identical
 * training overrides. An agent without `model` uses the only model when there is one.
 */
export function planWorkerGroups(config: ResolvedConfig): WorkerGroupPlan[] {
  const modelIds = Object.keys(config.models);
  const byModel = new Map<string, { model: string; settings: WorkerGroupPlan['settings']; agents: string[]; lora?: LoraSection }>();
  for (const [agent, entry] of Object.entries(config.agents)) {
    let model = entry.model;
    if (model === undefined) {
      if (modelIds.length !== 1) {
        throw new DrmasError('CONFIG_INVALID', `agent "${agent}" names no model and there are ${modelIds.length} models to choose from`, {
          key: `agents.${agent}.model`,
          hint: modelIds.length
            ? `set agents.${agent}.model to one of ${modelIds.join(', ')}`
            : 'add a model under `models`, e.g. models.policy = { model: "tiny" }',
        });
      }
      model = modelIds[0]!;
    }
    // Own keys only: a name such as "toString" is no model.
    const settings = Object.hasOwn(config.models, model) ? config.models[model] : undefined;
    if (settings === undefined) {
      throw new DrmasError('CONFIG_INVALID', `agent "${agent}" uses model "${model}", which is not defined under \`models\``, {
        key: `agents.${agent}.model`,
        hint: didYouMean(model, modelIds).trim() || `define models.${model} or use one of: ${modelIds.join(', ') || '(none)'}`,
      });
    }
    // A LoRA agent trains an adapter of its own: a group of its own on the model's (shared, frozen) base.
    const lora = entry.lora as LoraSection | undefined;
    const id = lora ? loraGroupId(model, agent) : model;
    const group = byModel.get(id);
    if (group) group.agents.push(agent);
    else byModel.set(id, { model, settings, agents: [agent], lora });
  }
  return [...byModel.entries()].map(([id, { model: modelId, settings, agents, lora }]) => {
    const shared: TrainOverrides = {};
    const setBy: Record<string, string> = {};
    for (const agent of agents) {
      const train = (config.agents[agent]!.train ?? {}) as TrainOverrides;
      for (const [key, value] of Object.entries(train) as Array<[keyof TrainOverrides, number]>) {
        if (value === undefined) continue;
        if (key in shared && shared[key] !== value) {
          throw new DrmasError(
            'CONFIG_INVALID',
            `agents "${setBy[key]}" and "${agent}" share model "${id}" but set different ${key} (${shared[key]} and ${value})`,
            {
              key: `agents.${agent}.train.${key}`,
              hint: `agents on one model train together: give them the same ${key}, or give "${agent}" a model of its own`,
            },
          );
        }
        shared[key] = value;
        setBy[key] = agent;
      }
    }
    const model = settings.optimizer as OptimizerSection;
    const training: WorkerGroupTraining = {
      optimizer: {
        lr: shared.lr ?? model.lr,
        betas: model.betas,
        eps: model.eps,
        weightDecay: shared.weightDecay ?? model.weightDecay,
        maxGradNorm: shared.maxGradNorm ?? model.maxGradNorm,
        moments: model.moments,
        // The model's param groups name its (here frozen) tensors; an adapter trains as one group.
        paramGroups: lora ? [] : model.paramGroups,
      },
      schedule: { kind: model.schedule, warmupSteps: model.warmupSteps },
      microBatchSize: shared.microBatchSize ?? DEFAULTS.microBatchSize,
      ...(shared.microBatchTokens !== undefined && { microBatchTokens: shared.microBatchTokens }),
      miniBatches: shared.miniBatches ?? DEFAULTS.miniBatches,
      epochs: shared.epochs ?? DEFAULTS.epochs,
    };
    const frozenAgents = agents.filter((agent) => config.agents[agent]!.trainable === false);
    return { id, model: modelId, agents, frozenAgents, settings, training, ...(lora ? { lora } : {}) };
  });
}

/**
 * `trainer.oldLogProbs: current` divides the PPO ratio by the update's own log-probs, which are the sampling policy's
 * only in a batch's first optimizer step: the group must take one (one mini-batch, one epoch).
 */
export function checkCurrentRatio(plan: WorkerGroupPlan): void {
  const { miniBatches, epochs } = plan.training;
  if (miniBatches * epochs === 1) return;
  const keys = [...(miniBatches > 1 ? ['miniBatches'] : []), ...(epochs > 1 ? ['epochs'] : [])];
  throw new DrmasError(
    'CONFIG_INVALID',
    `trainer.oldLogProbs 'current' needs one optimizer step per batch, and model "${plan.model}" takes ${miniBatches * epochs} (${miniBatches} mini-batch${miniBatches > 1 ? 'es' : ''} x ${epochs} epoch${epochs > 1 ? 's' : ''})`,
    {
      key: 'trainer.oldLogProbs',
      hint:
        `set trainer.oldLogProbs to 'auto' (the default) or 'recompute', which score the batch once before its optimizer steps, ` +
        `or set ${keys.map((k) => `train.${k}`).join(' and ')} to 1 for agents ${plan.agents.join(', ')}`,
    },
  );
}
