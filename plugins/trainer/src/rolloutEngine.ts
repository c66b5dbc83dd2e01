import {
  BackendFactory,
  describeEngine,
  DrmasError,
  rankedTrainingEngines,
  type ModelSettings,
  type OptionalPluginSpec,
  type Roles,
  type TrainingNeeds,
} from '@drmas/core';

/**
 * The tfjs engine as a preset's optional plugin (`optionalPlugins`): an optional peer dependency of the presets, so a
 * CPU install carries onnxruntime alone; a config that names tfjs without it is told to install it.
 */
export const OPTIONAL_TFJS_ENGINE: OptionalPluginSpec = { name: 'backend-tfjs', provides: { 'models.<id>.backend': ['tfjs'] } };

/** `models.<id>.rollout` value that picks the engine by availability and priority. */
export const AUTO_ROLLOUT = 'auto';

export interface RolloutChoice {
  /** The factory that samples; the trainer's own when nothing ranked above it is available. */
  name: string;
  /** Candidates passed over, each with its probe's reason. */
  skipped: Array<{ name: string; reason: string }>;
}

/** The factories `rollout: auto` may pick (those with a priority), highest first; registration order among equals. */
function autoCandidates(roles: Roles): Array<{ name: string; factory: BackendFactory }> {
  return roles
    .namesOf(BackendFactory)
    .map((name) => ({ name, factory: roles.getNamed(BackendFactory, name) }))
    .filter((c) => c.factory.priority !== undefined)
    .sort((a, b) => b.factory.priority! - a.factory.priority!);
}

/** Whether the trainer's weights stay on a server, so that the trainer must sample too. */
function samplesOnTrainer(roles: Roles, trainerName: string): boolean {
  return roles.namesOf(BackendFactory).includes(trainerName) && roles.getNamed(BackendFactory, trainerName).remoteWeights === true;
}

/** `rollout: auto`: the first available candidate, else the trainer's engine (always it when its weights are remote). */
export async function chooseRolloutEngine(roles: Roles, trainerName: string): Promise<RolloutChoice> {
  const skipped: RolloutChoice['skipped'] = [];
  if (samplesOnTrainer(roles, trainerName)) return { name: trainerName, skipped };
  for (const { name, factory } of autoCandidates(roles)) {
    if (name === trainerName) return { name, skipped };
    const reason = await factory.probe?.();
    if (reason === undefined) return { name, skipped };
    skipped.push({ name, reason });
  }
  return { name: trainerName, skipped };
}

/**
 * What `rollout: auto` resolves to when that needs no probe (for `drmas info`, which loads no engine); otherwise
 * `auto` and the order it would try, e.g. `auto (onnx, else tfjs)`.
 */
export function describeAutoRollout(roles: Roles, trainerName: string): string {
  if (samplesOnTrainer(roles, trainerName)) return trainerName;
  const order: string[] = [];
  for (const { name, factory } of autoCandidates(roles)) {
    if (name === trainerName || !factory.probe) {
      if (order.length === 0) return name;
      order.push(name);
      return `${AUTO_ROLLOUT} (${order.join(', else ')})`;
    }
    order.push(name);
  }
  return order.length === 0 ? trainerName : `${AUTO_ROLLOUT} (${[...order, trainerName].join(', else ')})`;
}

/**
 * Where a model samples, for `drmas info`: its rollout engine (`auto` as `describeAutoRollout` says), a server
 * (`vllm at http://...`), or the engine that trains it.
 */
export function describeRolloutSetting(roles: Roles, settings: ModelSettings): string {
  const rollout = settings.rollout;
  if (typeof rollout === 'object') return `${rollout.kind} at ${rollout.url}`;
  const name = rollout === AUTO_ROLLOUT ? describeAutoRollout(roles, settings.backend) : (rollout ?? settings.backend);
  return describeEngine(roles, name, settings);
}

/**
 * `backend: auto`: the highest-ranked engine that trains (`trainingPriority`) and is available here; none available
 * is a CONFIG_INVALID naming the key with each engine's reason.
 */
export async function chooseTrainingEngine(
  roles: Roles,
  modelId: string,
  settings: Record<string, unknown>,
  needs: TrainingNeeds = {},
): Promise<RolloutChoice> {
  const skipped: RolloutChoice['skipped'] = [];
  for (const name of rankedTrainingEngines(roles, settings, needs)) {
    const reason = await roles.getNamed(BackendFactory, name).probe?.();
    if (reason === undefined) return { name, skipped };
    skipped.push({ name, reason });
  }
  throw new DrmasError(
    'CONFIG_INVALID',
    `no engine that trains${needs.critic ? ' with a critic' : ''} is available here${skipped.map((s) => `; ${s.name}: ${s.reason}`).join('')}`,
    {
      key: `models.${modelId}.backend`,
      hint: 'install onnxruntime-node (or @drmas/plugin-backend-tfjs), or name an engine at this key',
    },
  );
}

/** What `backend: auto` would try, in order, for `drmas info` (which loads no engine), e.g. `auto (onnx, else tfjs)`. */
export function describeAutoTraining(roles: Roles, settings: Record<string, unknown>): string {
  return `${AUTO_ROLLOUT} (${rankedTrainingEngines(roles, settings).join(', else ')})`;
}

/** The run log's line for an `auto` choice of the engine that trains. */
export function describeTrainingChoice(groupId: string, choice: RolloutChoice, modelId = groupId): string {
  const skipped = choice.skipped.map((s) => `; skipped ${s.name}: ${s.reason}`).join('');
  return `training engine of ${groupId} (models.${modelId}.backend: ${AUTO_ROLLOUT}): ${choice.name}${skipped}`;
}

/** The run log's line for an `auto` choice. */
export function describeRolloutChoice(groupId: string, choice: RolloutChoice, trainerName: string, modelId = groupId): string {
  const skipped = choice.skipped.map((s) => `; skipped ${s.name}: ${s.reason}`).join('');
  return (
    `rollout engine of ${groupId} (models.${modelId}.rollout: ${AUTO_ROLLOUT}): ${choice.name}` +
    `${choice.name === trainerName ? ", the trainer's engine" : ''}${skipped}`
  );
}

/** The factory named at `key`, which must be available: an unavailable one fails with the key and its reason. */
export async function availableFactory(roles: Roles, name: string, key: string): Promise<BackendFactory> {
  const factory = roles.getNamed(BackendFactory, name, key);
  const reason = await factory.probe?.();
  if (reason !== undefined) {
    throw new DrmasError('CONFIG_INVALID', `engine "${name}" is unavailable here: ${reason}`, {
      key,
      hint: key.endsWith('.rollout')
        ? `install what is missing, or set ${key}: ${AUTO_ROLLOUT} to sample on the best engine available`
        : `install what is missing, or name another engine at ${key}`,
    });
  }
  return factory;
}
