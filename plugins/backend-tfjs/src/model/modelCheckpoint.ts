import { configJsonFor, readModelFolder, saveCheckpoint, type CheckpointFileContents, type CheckpointTokenizer } from '@drmas/models';
import { DecoderModel } from './DecoderModel.js';

export interface LoadedModel {
  model: DecoderModel;
  /** The checkpoint folder when it holds a tokenizer.json. */
  tokenizerDir?: string;
  generationConfig?: Record<string, unknown>;
}

/** Loads a Hugging Face checkpoint folder (config.json + safetensors); only the tensors the decoder uses are read. */
export async function loadDecoderModel(dir: string): Promise<LoadedModel> {
  const { config, weights, tokenizerDir, generationConfig } = await readModelFolder(dir);
  return { model: DecoderModel.fromTensors(config, weights), tokenizerDir, generationConfig };
}

export interface SaveModelOptions {
  tokenizer?: CheckpointTokenizer;
  /** Copy tokenizer files from this folder when `tokenizer` is not given. */
  tokenizerDir?: string;
  extraFiles?: Record<string, CheckpointFileContents>;
  /** Storage dtype of the weights (default float32); bfloat16 halves the size for distribution. */
  dtype?: 'float32' | 'bfloat16';
}

/** Writes config.json (with architectures, model_type, torch_dtype) and model.safetensors (F32 or BF16) under HF names. */
export async function saveDecoderModel(dir: string, model: DecoderModel, options: SaveModelOptions = {}): Promise<void> {
  const tensors = await model.exportTensors();
  const bf16 = options.dtype === 'bfloat16';
  await saveCheckpoint(dir, {
    config: { ...configJsonFor(model.config), ...(bf16 ? { torch_dtype: 'bfloat16' } : {}) },
    tensors,
    dtype: bf16 ? 'BF16' : 'F32',
    tokenizer: options.tokenizer,
    tokenizerDir: options.tokenizerDir,
    extraFiles: options.extraFiles,
  });
}
