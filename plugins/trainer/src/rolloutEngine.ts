import { AUTO_BACKEND, type EngineChoice, type Engines, type ModelSettings } from '@drmas/core';

/**
 * What `rollout: auto` resolves to when that needs no probe (for `drmas info`, which loads no engine); otherwise
 * `auto` and the order it would try, e.g. `auto (onnx, else tfjs)`.
 */
export function describeAutoRollout(engines: Engines, trainerName: string, settings: Record<string, unknown>): string {
  if (engines.names().includes(trainerName) && engines.get(trainerName, 'models.<id>.backend').remoteWeights) return trainerName;
  const order: string[] = [];
  for (const name of engines.ranked({ needs: ['sample'], settings })) {
    if (name === trainerName || !engines.get(name, 'models.<id>.rollout').probe) {
      if (order.length === 0) return name;
      order.push(name);
      return `${AUTO_BACKEND} (${order.join(', else ')})`;
    }
    order.push(name);
  }
  return order.length === 0 ? trainerName : `${AUTO_BACKEND} (${[...order, trainerName].join(', else ')})`;
}

/**
 * Where a model samples, for `drmas info`: its rollout engine (`auto` as `describeAutoRollout` says), a server
 * (`vllm at http://...`), or the engine that trains it.
 */
export function describeRolloutSetting(engines: Engines, settings: ModelSettings): string {
  const rollout = settings.rollout;
  if (typeof rollout === 'object') return `${rollout.kind} at ${rollout.url}`;
  const name = rollout === AUTO_BACKEND ? describeAutoRollout(engines, settings.backend, settings) : (rollout ?? settings.backend);
  return engines.describe(name, settings);
}

/** What `backend: auto` would try, in order, for `drmas info` (which loads no engine), e.g. `auto (onnx, else tfjs)`. */
export function describeAutoTraining(engines: Engines, settings: Record<string, unknown>): string {
  return `${AUTO_BACKEND} (${engines.ranked({ needs: ['train'], settings }).join(', else ')})`;
}

function skippedText(choice: EngineChoice): string {
  return choice.skipped.map((s) => `; skipped ${s.name}: ${s.reason}`).join('');
}

/** The run log's line for an `auto` choice of the engine that trains. */
export function describeTrainingChoice(groupId: string, choice: EngineChoice, modelId = groupId): string {
  return `training engine of ${groupId} (models.${modelId}.backend: ${AUTO_BACKEND}): ${choice.name}${skippedText(choice)}`;
}

/** The run log's line for an `auto` choice. */
export function describeRolloutChoice(groupId: string, choice: EngineChoice, trainerName: string, modelId = groupId): string {
  return (
    `rollout engine of ${groupId} (models.${modelId}.rollout: ${AUTO_BACKEND}): ${choice.name}` +
    `${choice.name === trainerName ? ", the trainer's engine" : ''}${skippedText(choice)}`
  );
}
