import {
  didYouMean,
  DrmasError,
  expectedTrainingFactory,
  BackendFactory,
  formatBytes,
  type MemoryBudget,
  type MemoryEstimateReport,
  type ResolvedConfig,
  type Contributions,
  resolveMemoryBudget,
  rolesReadingValues,
} from '@drmas/core';
import { keyValueBytesPerToken, readModelShape, type ModelShape } from '@drmas/models';
import type { Agent } from '../agents/Agent.js';
import type { EvalSettings } from '../evaluation/EvaluationTaps.js';
import type { Orchestra } from '../orchestras/Orchestra.js';
import type { OrchestraSettings } from './orchestraConfig.js';
import type { OrchestraConfig } from './orchestraSchema.js';

/**
 * Bytes a step keeps per sampled token at the least: in its turn (id, log-prob, text) and in the packed batch's
 * columns (id, mask, rollout/old/reference log-probs, token rewards, advantages, returns: 4+4+4+4+4+8+8+8).
 */
export const STEP_RECORD_BYTES_PER_TOKEN = 64;

const count = (n: number) => n.toLocaleString('en-US');

/**
 * `agents` roles the orchestra does not have are typos (`agents.solvr`), unless a preset set them for an orchestra
 * of its own: only roles the user wrote are checked.
 */
export function checkAgentRoles(config: ResolvedConfig, orchestra: Orchestra, originOf: (key: string) => string | undefined): void {
  const roles = Object.keys(orchestra.agents);
  for (const role of Object.keys(config.agents)) {
    if (roles.includes(role) || originOf(`agents.${role}`)?.startsWith('preset ')) continue;
    const suggestion = didYouMean(role, roles);
    throw new DrmasError(
      'CONFIG_INVALID',
      `unknown agent role ${role} in agents; the orchestra ${orchestra.name} has ${roles.join(', ')}.${suggestion}`,
      {
        key: `agents.${role}`,
        hint: `${suggestion.trim() ? `${suggestion.trim()} ` : ''}Remove agents.${role}, or set orchestra.name to an orchestra with the role ${role}.`,
      },
    );
  }
}

/**
 * Every role of a runner that calls all its roles (`majority_vote`, `summary`, `debate`) needs an `agents.<role>`
 * entry (its model): found here at validate, not at the first call of the role in a rollout or evaluation.
 */
export function checkRunnerRoles(config: ResolvedConfig, orchestra: Orchestra): void {
  const listed = Object.keys(config.agents);
  for (const role of Object.keys(orchestra.agents)) {
    if (Object.hasOwn(config.agents, role)) continue;
    const unused = listed.filter((name) => !Object.hasOwn(orchestra.agents, name));
    const suggestion = didYouMean(role, unused).trim();
    const debate = orchestra.name === 'debate' && role !== 'judge' ? ', or list in orchestra.debaters the roles agents has' : '';
    throw new DrmasError('CONFIG_INVALID', `orchestra ${orchestra.name} calls the agent role ${role}, which agents does not list`, {
      key: `agents.${role}`,
      hint: `add agents.${role} = { model: "<model id>" }${debate}${suggestion ? `. ${suggestion}` : ''}`,
    });
  }
}

/** The model id an agent samples from: its `model`, or the only model. */
function modelOf(config: ResolvedConfig, role: string): string | undefined {
  const named = config.agents[role]?.model;
  if (named !== undefined) return Object.hasOwn(config.models, named) ? named : undefined;
  const ids = Object.keys(config.models);
  return ids.length === 1 ? ids[0] : undefined;
}

interface AgentLimits {
  role: string;
  maxNewTokens: number;
  modelId?: string;
  shape?: ModelShape;
  /**
   * What its model's sampling engine holds per token in its key/value cache (`cacheBytesPerToken`; float32 keys and
   * values of every layer where the engine does not say).
   */
  cache?: { bytes: number; reason: string };
  /**
   * What its model's training engine holds per sampled token beyond the key/value cache (`trainingBytesPerToken`),
   * and the padded tokens of one micro-batch when they are bounded: `agents.<role>.train.microBatchTokens`, else the
   * engine's own bound.
   */
  training?: { bytes: number; reason: string; microBatchTokens?: number; microBatchReason?: string; microBatchKey?: string };
  /** What its model's training engine holds whatever the batch: weights, gradients, optimizer state (`trainingStateBytes`). */
  state?: { bytes: number; reason: string };
}

/** Each agent's response bound and its model's shape (when its config.json can be read without the weights). */
export function agentLimits(
  config: ResolvedConfig,
  agents: ReadonlyMap<string, Agent>,
  contributions?: Pick<Contributions, 'getNamed' | 'namesOf'>,
  budget: MemoryBudget | undefined = contributions && resolveMemoryBudget(config, contributions),
): AgentLimits[] {
  // A critic of its own trunk (`critic.model`, else the policy's) trains beside each model whose agents' estimator
  // reads values; one on the policy's trunk (`shareTrunk`) trains its head alone.
  const critic = config.critic as CriticSection | undefined;
  const ownCritic = critic?.learner !== undefined && !critic.shareTrunk;
  const valueRoles = contributions && ownCritic ? rolesReadingValues(contributions, config) : new Set<string>();
  return [...agents.values()].map((agent) => {
    const modelId = modelOf(config, agent.role);
    const settings = modelId === undefined ? undefined : config.models[modelId]!;
    const shape = settings && readModelShape(settings.model);
    const criticTrunk = settings && valueRoles.has(agent.role) ? { model: critic?.model ?? settings.model } : undefined;
    const factory = settings && contributions && expectedTrainingFactory(contributions, settings);
    // The trainer's engine samples too, unless `rollout` names another engine.
    const rollout = settings?.rollout;
    const sampler =
      typeof rollout === 'string' && contributions?.namesOf(BackendFactory).includes(rollout)
        ? contributions.getNamed(BackendFactory, rollout)
        : factory;
    const cache =
      (settings && sampler?.cacheBytesPerToken?.(settings)) ??
      (shape ? { bytes: keyValueBytesPerToken(shape), reason: 'key/value cache' } : undefined);
    const perToken =
      settings && budget && factory?.trainingBytesPerToken?.(settings, { budget, ...(criticTrunk && { critic: criticTrunk }) });
    // A model whose agents train LoRA adapters is their frozen base: every such agent's adapter counts with it.
    const adapters =
      modelId === undefined
        ? []
        : [...agents.values()].flatMap((other) => {
            const lora = config.agents[other.role]?.lora as { rank: number; targetModules: string[] } | undefined;
            return lora && modelOf(config, other.role) === modelId ? [lora] : [];
          });
    const state = settings && factory?.trainingStateBytes?.(settings, adapters.length > 0 ? adapters : undefined);
    const configured = (config.agents[agent.role]?.train as { microBatchTokens?: number } | undefined)?.microBatchTokens;
    const training = perToken && {
      ...perToken,
      ...(configured !== undefined && { microBatchTokens: configured, microBatchKey: `agents.${agent.role}.train.microBatchTokens` }),
    };
    return {
      role: agent.role,
      maxNewTokens: agent.sampling.maxNewTokens,
      modelId,
      shape,
      ...(cache ? { cache } : {}),
      ...(training ? { training } : {}),
      ...(state ? { state } : {}),
    };
  });
}

/** The trainer's `critic` section as far as the memory check reads it (absent without the trainer plugin). */
type CriticSection = { learner?: string; model?: string; shareTrunk?: boolean };

/** A response must leave its prompt at least one of the model's positions. */
export function checkPositions(limits: readonly AgentLimits[]): void {
  for (const { role, maxNewTokens, modelId, shape } of limits) {
    if (!shape || maxNewTokens < shape.maxPositions) continue;
    throw new DrmasError(
      'LIMIT_EXCEEDED',
      `agents.${role}.sampling.maxNewTokens is ${count(maxNewTokens)}, but model ${modelId} has ${count(shape.maxPositions)} positions ` +
        `(max_position_embeddings of ${shape.source}) for the prompt and the response together`,
      {
        key: `agents.${role}.sampling.maxNewTokens`,
        hint: `lower it well below ${count(shape.maxPositions)}, leaving room for the prompt`,
      },
    );
  }
}

/** What one batch of episodes holds at the least, with the arithmetic shown. */
export interface MemoryEstimate {
  bytes: number;
  /** `8 rows (...) x 56 tokens (...) x 4,288 bytes per token (...) = 1.8 MiB` */
  arithmetic: string;
}

/** How long an episode runs: its turns in all, and the loops of a round (`orchestra.maxLoops`). */
export interface EpisodeTurns {
  turns: number;
  loops: number;
}

/**
 * The tokens of a round's longest row, without the task's own prompt: a turn's prompt carries the outputs of the
 * round's earlier turns (`{team_context}`), so the round's last call holds every agent's response of every loop.
 */
function roundContext(limits: readonly AgentLimits[], loops: number): { tokens: number; why: string } {
  const sum = limits.reduce((s, l) => s + l.maxNewTokens, 0);
  const keys = limits.map((l) => `agents.${l.role}.sampling.maxNewTokens ${count(l.maxNewTokens)}`);
  if (loops * limits.length === 1) return { tokens: sum, why: `agents.${limits[0]!.role}.sampling.maxNewTokens` };
  const responses = limits.length === 1 ? keys[0]! : `(${keys.join(' + ')})`;
  return {
    tokens: loops * sum,
    why: `a round's longest row: orchestra.maxLoops ${loops} x ${responses}, each turn's prompt carrying the round's earlier outputs`,
  };
}

/**
 * What a batch of `rows` episodes sampled together holds: rows x the tokens of a round's longest row (every response
 * of the round; the task's prompt adds more) x bytes per token, which are the sampling engine's key/value cache of
 * the largest model (held while an agent's call samples every row at once) and what the training engine keeps per
 * token for its backward pass (`trains`; where the engine or the config bounds a micro-batch's tokens, for one
 * micro-batch of that many tokens instead, or of one whole row where a row is longer), plus the step's records of
 * each turn's response; and, once per model, what its training engine holds whatever the batch (weights, gradients,
 * optimizer state: held through evaluations too).
 */
export function estimateEpisodeMemory(
  limits: readonly AgentLimits[],
  rows: { count: number; why: string },
  episode: EpisodeTurns,
  trains = true,
): MemoryEstimate {
  const longest = limits.reduce<AgentLimits | undefined>((best, l) => (!best || l.maxNewTokens > best.maxNewTokens ? l : best), undefined);
  const largest = limits.reduce<AgentLimits | undefined>(
    (best, l) => (l.cache && l.cache.bytes > (best?.cache?.bytes ?? 0) ? l : best),
    undefined,
  );
  const response = longest?.maxNewTokens ?? 0;
  const context = limits.length > 0 ? roundContext(limits, episode.loops) : { tokens: 0, why: '' };
  const tokens = context.tokens;
  const cache = largest?.cache?.bytes ?? 0;
  // An evaluation only samples: no training pass, so no activations kept for one.
  const training = trains
    ? limits.reduce<AgentLimits | undefined>((best, l) => ((l.training?.bytes ?? 0) > (best?.training?.bytes ?? 0) ? l : best), undefined)
    : undefined;
  // A micro-batch bounded by tokens keeps at most that many tokens' activations, whatever the rows, but a whole row.
  const bound = training?.training?.microBatchTokens;
  const microBatchTokens = bound === undefined ? undefined : Math.max(bound, tokens);
  const microBatch =
    training?.training && microBatchTokens !== undefined && microBatchTokens < rows.count * tokens
      ? {
          tokens: microBatchTokens,
          bytes: microBatchTokens * training.training.bytes,
          why:
            microBatchTokens > bound!
              ? 'one whole row'
              : (training.training.microBatchKey ?? engineBound(training.modelId!, training.training)),
        }
      : undefined;
  const perToken = cache + (microBatch ? 0 : (training?.training?.bytes ?? 0));
  const records = rows.count * episode.turns * response * STEP_RECORD_BYTES_PER_TOKEN;
  const states = new Map(limits.flatMap((l) => (l.state ? [[l.modelId, l.state] as const] : [])));
  const fixed = [...states.values()].reduce((s, state) => s + state.bytes, 0) + (microBatch?.bytes ?? 0);
  const bytes = rows.count * tokens * perToken + records + fixed;
  const parts = [
    cache ? `${count(cache)} of model ${largest!.modelId}'s ${largest!.cache!.reason}` : undefined,
    training?.training && !microBatch
      ? `${count(training.training.bytes)} of model ${training.modelId}'s ${training.training.reason}`
      : undefined,
  ].filter(Boolean);
  const perTokenTerm = parts.length > 0 ? ` x ${count(perToken)} bytes per token (${parts.join(' + ')})` : ' x 0 bytes per token';
  const recordsTerm =
    ` + ${count(rows.count)} rows x ${episode.turns} turns x ${count(response)} tokens (agents.${longest?.role}.sampling.maxNewTokens)` +
    ` x ${STEP_RECORD_BYTES_PER_TOKEN} bytes of step records`;
  const microBatchTerm = microBatch
    ? ` + one micro-batch of ${count(microBatch.tokens)} tokens (${microBatch.why}) x ` +
      `${count(training!.training!.bytes)} bytes of ${training!.training!.reason}`
    : '';
  return {
    bytes,
    arithmetic:
      `${count(rows.count)} rows (${rows.why}) x ${count(tokens)} tokens (${context.why})` +
      perTokenTerm +
      recordsTerm +
      microBatchTerm +
      [...states].map(([id, state]) => ` + ${formatBytes(state.bytes)} of model ${id}'s training state (${state.reason})`).join('') +
      ` = ${formatBytes(bytes)}`,
  };
}

/** `model policy's engine's bound`, and how the engine chose it where it says. */
function engineBound(modelId: string, { microBatchReason }: { microBatchReason?: string }): string {
  return `model ${modelId}'s engine's bound${microBatchReason ? `: ${microBatchReason}` : ''}`;
}

/** The most turns an episode can have: every agent called in each loop of each round. */
export function turnsPerEpisode(agentCount: number, orchestra: OrchestraSettings, envMaxSteps: number): number {
  return agentCount * orchestra.maxLoops * envMaxSteps;
}

/**
 * Training steps and evaluations must fit the memory budget: LIMIT_EXCEEDED with the estimate otherwise; the two
 * estimates when they fit (none without agents).
 */
export function checkMemory(
  config: OrchestraConfig,
  limits: readonly AgentLimits[],
  turns: number,
  budget: MemoryBudget,
): MemoryEstimateReport[] {
  if (limits.length === 0) return [];
  const episode = { turns, loops: config.orchestra.maxLoops };
  const { rollout, eval: evaluation } = config;
  const longestKey = `agents.${limits.reduce((a, b) => (b.maxNewTokens > a.maxNewTokens ? b : a), limits[0]!).role}.sampling.maxNewTokens`;
  const training = estimateEpisodeMemory(
    limits,
    {
      count: rollout.promptsPerStep * rollout.samplesPerPrompt,
      why: `rollout.promptsPerStep ${count(rollout.promptsPerStep)} x rollout.samplesPerPrompt ${count(rollout.samplesPerPrompt)}`,
    },
    episode,
  );
  if (training.bytes > budget.bytes) {
    throw new DrmasError(
      'LIMIT_EXCEEDED',
      `a training step would hold at least ${training.arithmetic} > ${formatBytes(budget.bytes)} (${budget.description})`,
      {
        key: rollout.samplesPerPrompt >= rollout.promptsPerStep ? 'rollout.samplesPerPrompt' : 'rollout.promptsPerStep',
        hint: `lower rollout.samplesPerPrompt, rollout.promptsPerStep or ${longestKey}, or raise trainer.memoryBudget`,
      },
    );
  }
  const tasksAtOnce = evaluation.tasks > 0 ? Math.min(evaluation.tasks, evaluation.tasksPerBatch) : evaluation.tasksPerBatch;
  const evaluating = estimateEpisodeMemory(
    limits,
    {
      count: tasksAtOnce * evaluation.k,
      why: `${evaluation.tasks > 0 && evaluation.tasks < evaluation.tasksPerBatch ? `eval.tasks ${count(tasksAtOnce)}` : `eval.tasksPerBatch ${count(tasksAtOnce)}`} x eval.k ${count(evaluation.k)}`,
    },
    episode,
    false,
  );
  if (evaluating.bytes > budget.bytes) {
    throw new DrmasError(
      'LIMIT_EXCEEDED',
      `an evaluation batch would hold at least ${evaluating.arithmetic} > ${formatBytes(budget.bytes)} (${budget.description})`,
      {
        key: 'eval.k',
        hint: `lower eval.k, eval.tasksPerBatch or ${longestKey}, or raise trainer.memoryBudget`,
      },
    );
  }
  return [
    { what: 'a training step', ...training, budget },
    { what: 'an evaluation batch', ...evaluating, budget },
  ];
}

/** `eval.tasks` takes the first tasks of the held-out split, which must have that many. */
export function checkEvalTasks(settings: EvalSettings, available: number, environment: string): void {
  if (settings.tasks <= available) return;
  throw new DrmasError(
    'LIMIT_EXCEEDED',
    `eval.tasks is ${count(settings.tasks)}, but the held-out split of environment ${environment} has ${count(available)} tasks`,
    {
      key: 'eval.tasks',
      hint: `set eval.tasks to ${count(available)} or less (0 takes them all), or give the environment more held-out tasks`,
    },
  );
}
