import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_FILE, GENERATION_CONFIG_FILE, loadCheckpoint } from '../checkpoint/checkpointDirectory.js';
import { CheckpointError, TensorShapeError } from '../checkpoint/errors.js';
import { readSafetensorsHeader, type SafetensorsDtype, type SafetensorsEntry } from '../checkpoint/safetensors.js';
import {
  readSafetensorsIndex,
  readShardedSafetensorsHeaders,
  SAFETENSORS_FILE,
  SAFETENSORS_INDEX_FILE,
} from '../checkpoint/shardedSafetensors.js';
import { expectedWeightShapes, parseModelConfig, type DecoderConfig } from '../config/ModelConfig.js';
import { ModelConfigError } from '../config/ModelErrors.js';

/** What a model folder holds, read from its json files and safetensors headers only (no weights). */
export interface ModelFolderSummary {
  dir: string;
  /** config.json resolved; `eosTokenIds` joins generation_config.json's `eos_token_id` to config.json's. */
  config: DecoderConfig;
  /** Weights the decoder uses. */
  parameters: number;
  /** Dtypes of those weights on disk. */
  dtypes: SafetensorsDtype[];
  /** The safetensors files they are in (1 for `model.safetensors`). */
  files: number;
  /** The folder when it holds a tokenizer.json. */
  tokenizerDir?: string;
  generationConfig?: Record<string, unknown>;
}

/**
 * Checks a Hugging Face model folder before any weight is read: config.json parses as a supported decoder, every
 * tensor the decoder needs is in the safetensors headers (one file or the shards of the index) with its shape, and
 * the end-of-sequence ids of generation_config.json are joined to config.json's (transformers' `generate` stops on
 * generation_config.json's: an Instruct model's turn ends with an id config.json may not list).
 */
export async function inspectModelFolder(dir: string): Promise<ModelFolderSummary> {
  const probe = await loadCheckpoint(dir, { filter: () => false });
  const configFile = join(probe.dir, CONFIG_FILE);
  const parsed = parseModelConfig(probe.config, configFile);
  const config = { ...parsed, eosTokenIds: joinedEosIds(parsed, probe.generationConfig, join(probe.dir, GENERATION_CONFIG_FILE)) };
  const indexFile = join(probe.dir, SAFETENSORS_INDEX_FILE);
  const sharded = existsSync(indexFile);
  const entries = sharded
    ? await readShardedSafetensorsHeaders(indexFile)
    : (await readSafetensorsHeader(join(probe.dir, SAFETENSORS_FILE))).tensors;
  const dtypes = new Set<SafetensorsDtype>();
  let parameters = 0;
  for (const [name, shape] of expectedWeightShapes(config)) {
    const entry = entries.get(name);
    checkEntry(name, shape, entry, config, configFile);
    dtypes.add(entry.dtype);
    parameters += shape.reduce((a, b) => a * b, 1);
  }
  return {
    dir: probe.dir,
    config,
    parameters,
    dtypes: [...dtypes],
    files: sharded ? new Set(Object.values((await readSafetensorsIndex(indexFile)).weight_map)).size : 1,
    tokenizerDir: probe.tokenizerDir,
    generationConfig: probe.generationConfig,
  };
}

function checkEntry(
  name: string,
  shape: number[],
  entry: SafetensorsEntry | undefined,
  config: DecoderConfig,
  configFile: string,
): asserts entry is SafetensorsEntry {
  if (entry === undefined && name === 'lm_head.weight') {
    throw new CheckpointError(
      configFile,
      `tie_word_embeddings is ${JSON.stringify(config.raw.tie_word_embeddings ?? false)}${
        config.raw.tie_word_embeddings === undefined ? ` (${config.architecture}'s default)` : ''
      }, but the weights have no lm_head.weight`,
      'the output head is tied to the embedding in this checkpoint: set "tie_word_embeddings": true in config.json',
    );
  }
  if (entry === undefined || entry.shape.length !== shape.length || entry.shape.some((d, i) => d !== shape[i])) {
    throw new TensorShapeError(name, shape, entry?.shape);
  }
}

/** config.json's end-of-sequence ids, then generation_config.json's that it lacks. */
function joinedEosIds(config: DecoderConfig, generation: Record<string, unknown> | undefined, file: string): number[] {
  const value = generation?.eos_token_id;
  if (value == null) return config.eosTokenIds;
  const ids = Array.isArray(value) ? (value as unknown[]) : [value];
  const bad = ids.find((id) => !Number.isInteger(id) || (id as number) < 0 || (id as number) >= config.vocabSize);
  if (bad !== undefined) {
    throw new ModelConfigError(`eos_token_id ${JSON.stringify(bad)} is not a token id of a ${config.vocabSize}-token vocabulary`, {
      file,
      key: 'eos_token_id',
    });
  }
  return [...new Set([...config.eosTokenIds, ...(ids as number[])])];
}
