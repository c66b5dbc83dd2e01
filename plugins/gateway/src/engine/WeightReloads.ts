import { existsSync } from 'node:fs';
import path from 'node:path';
import { OpenAiError } from '../server/OpenAiError.js';
import { PrefixCache } from './PrefixCache.js';
import type { ServedModel, ServedModels } from './ServedModels.js';

/**
 * Weight reloads from disk, as vLLM's and SGLang's servers take them from a trainer: a Hugging Face checkpoint folder
 * loaded into the engine between two batches, and a version string the trainer sets and reads back. The gateway holds
 * one version, as those servers do (one model per server).
 */
export class WeightReloads {
  /** The version the last reload (or `update_weight_version`) set; null until then (vLLM's `None`). */
  version: string | null = null;
  /** Reloads done. */
  count = 0;
  /** The served prompts' cached blocks, stale after a reload until reset (vLLM) or flushed (SGLang). */
  readonly prefixCache = new PrefixCache();

  constructor(private readonly models: ServedModels) {}

  /**
   * Loads the checkpoint at `dir` into the served model's engine, after the batch in progress and before the next one;
   * `param` names the request field that gave the folder. A gateway over several models takes `model` to pick one.
   */
  async load(dir: unknown, param: string, modelName?: unknown): Promise<ServedModel> {
    if (typeof dir !== 'string' || dir.length === 0) throw OpenAiError.badRequest(`${param} must name a checkpoint folder`, param);
    if (!path.isAbsolute(dir))
      throw OpenAiError.badRequest(
        `${param} must be an absolute path (the server's working folder is not the trainer's), got "${dir}"`,
        param,
      );
    if (!existsSync(path.join(dir, 'config.json'))) {
      throw OpenAiError.badRequest(`${param}: ${dir} holds no Hugging Face checkpoint (no config.json)`, param);
    }
    const served = this.target(modelName);
    await served.batcher.exclusive(() => served.engine.load(dir, { optimizer: false }));
    this.prefixCache.weightsChanged();
    this.count++;
    return served;
  }

  /** The model a reload or an SGLang `/generate` goes to: the one named, else the only model this gateway serves. */
  target(modelName?: unknown): ServedModel {
    if (modelName !== undefined && modelName !== null) {
      const served = typeof modelName === 'string' ? this.models.find(modelName) : undefined;
      if (!served)
        throw OpenAiError.notFound(
          `model ${JSON.stringify(modelName)} is not served here. ${this.models.suggest(typeof modelName === 'string' ? modelName : '')}`,
          'model',
          'model_not_found',
        );
      return served;
    }
    const ids = [...new Set(this.models.all().map((m) => m.modelId))];
    if (ids.length !== 1) {
      throw OpenAiError.badRequest(`this gateway serves ${ids.length} models (${ids.join(', ')}); name one in "model"`, 'model');
    }
    return this.models.find(ids[0]!)!;
  }
}
