import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { didYouMean, DrmasError } from '@drmas/core';
import { loadCheckpoint } from '../checkpoint/checkpointDirectory.js';
import { CheckpointError } from '../checkpoint/errors.js';
import { BUILTIN_MODELS, builtinModel, isBuiltinModelName } from '../builtin/builtinModels.js';
import { expectedWeightShapes, type ArchitectureName, type DecoderConfig } from '../config/ModelConfig.js';
import { Tokenizer, TOKENIZER_FILE } from '../tokenizer/Tokenizer.js';
import type { HostTensor } from './HostTensor.js';
import { inspectModelFolder } from './inspectModelFolder.js';

export interface ModelSource {
  /** `tiny` / `small` (built-in, initialised from `seed`) or a checkpoint folder. */
  model: string;
  /** Initialisation seed of a built-in model (default 0). */
  seed?: number;
  /** Architecture of a built-in model (default Qwen2ForCausalLM); ignored for checkpoints. */
  architecture?: ArchitectureName;
}

export interface ModelWeights {
  config: DecoderConfig;
  weights: Map<string, HostTensor>;
  tokenizer?: Tokenizer;
}

/** A checkpoint folder's decoder: its config, the tensors the decoder uses, and what else the folder holds. */
export interface ModelFolder {
  config: DecoderConfig;
  weights: Map<string, HostTensor>;
  /** The folder when it holds a tokenizer.json. */
  tokenizerDir?: string;
  generationConfig?: Record<string, unknown>;
}

/**
 * Reads a Hugging Face checkpoint folder (config.json + safetensors), checked by `inspectModelFolder` before any weight
 * is read; only the tensors the decoder uses are read.
 */
export async function readModelFolder(dir: string): Promise<ModelFolder> {
  const { config, tokenizerDir, generationConfig } = await inspectModelFolder(dir);
  const wanted = expectedWeightShapes(config);
  const checkpoint = await loadCheckpoint(dir, { filter: (name) => wanted.has(name) });
  return { config, weights: checkpoint.tensors, tokenizerDir, generationConfig };
}

/** A decoder's config, host weights and tokenizer: a built-in model initialised from its seed, or a checkpoint folder. */
export async function loadModelWeights(source: ModelSource): Promise<ModelWeights> {
  if (isBuiltinModelName(source.model)) return builtinModel(source.model, { seed: source.seed, architecture: source.architecture });
  let folder: ModelFolder;
  try {
    folder = await readModelFolder(source.model);
  } catch (error) {
    if (!(error instanceof CheckpointError) || existsSync(source.model)) throw error;
    const names = Object.keys(BUILTIN_MODELS);
    throw new CheckpointError(
      error.path,
      error.message,
      `give ${names.join(', ')} or a Hugging Face checkpoint folder (config.json + model.safetensors).${didYouMean(source.model, names)}`,
    );
  }
  const { config, weights, tokenizerDir } = folder;
  const tokenizer = tokenizerDir ? await Tokenizer.fromDirectory(tokenizerDir) : undefined;
  if (tokenizer && tokenizerDir && tokenizer.vocabSize > config.vocabSize) {
    throw new CheckpointError(
      join(tokenizerDir, TOKENIZER_FILE),
      `the tokenizer has ${tokenizer.vocabSize} token ids but config.json's vocab_size is ${config.vocabSize}: ids from ${config.vocabSize} on have no embedding (another model's tokenizer?)`,
      "put this model's own tokenizer.json and tokenizer_config.json beside its weights, as transformers' save_pretrained writes them",
    );
  }
  return { config, weights, tokenizer };
}

/**
 * The trunk of a critic (`critic.model`, with its policy model's architecture and seed): `loadModelWeights`, with an
 * error a user can cause placed at `critic.model` and naming the critic and the engine it was loading on.
 */
export async function loadCriticTrunk(criticId: string, source: ModelSource, engine: string): Promise<ModelWeights> {
  try {
    return await loadModelWeights(source);
  } catch (cause) {
    if (!DrmasError.is(cause)) throw cause;
    throw cause.at('critic.model', `critic ${criticId}${cause.file ? '' : ` (${source.model})`} failed to load on ${engine}`);
  }
}
