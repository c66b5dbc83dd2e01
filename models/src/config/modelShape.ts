import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUILTIN_MAX_POSITIONS, BUILTIN_MODELS, isBuiltinModelName } from '../builtin/builtinModels.js';
import { parseModelConfig } from './ModelConfig.js';

/** What sizes a run can hold for a model, read without its weights. */
export interface ModelShape {
  /** Positions of the model (`max_position_embeddings`): a prompt and its response together. */
  maxPositions: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  hiddenSize: number;
  intermediateSize: number;
  vocabSize: number;
  /** Whether the output head is the embedding matrix (`tie_word_embeddings`). */
  tiedEmbeddings: boolean;
  /** Where the shape was read: `built-in tiny` or the config.json file. */
  source: string;
}

/** Bytes a sampling engine's key/value cache holds per token (keys and values of every layer, float32 by default). */
export function keyValueBytesPerToken(shape: ModelShape, bytesPerValue = 4): number {
  return 2 * shape.numLayers * shape.numKvHeads * shape.headDim * bytesPerValue;
}

/**
 * The weights of the model's matrices: embeddings, attention and MLP projections, the output head unless tied. Norms
 * and biases are left out (Qwen2.5-0.5B: 493,961,216 of its 494,032,768), so the count is a lower bound within 0.1%.
 */
export function matrixWeightCount(shape: ModelShape): number {
  const attention = shape.hiddenSize * shape.headDim * 2 * (shape.numHeads + shape.numKvHeads);
  const mlp = 3 * shape.hiddenSize * shape.intermediateSize;
  return shape.numLayers * (attention + mlp) + shape.vocabSize * shape.hiddenSize * (shape.tiedEmbeddings ? 1 : 2);
}

/**
 * Float32 bytes per token a training pass that keeps every layer's activations for its backward pass holds at the
 * least: per layer the two normed inputs, the query and output projections, keys and values, and the MLP's gate, up
 * and activated products; then the logits and their log-softmax over `headWidth` columns: the vocabulary, or the
 * chunk of an engine that goes over a wide vocabulary in chunks (onnx's `HEAD_VOCAB_CHUNK`).
 */
export function activationBytesPerToken(
  shape: Pick<ModelShape, 'numLayers' | 'numKvHeads' | 'headDim' | 'hiddenSize' | 'intermediateSize' | 'vocabSize'>,
  headWidth: number = shape.vocabSize,
): number {
  const kv = 2 * shape.numKvHeads * shape.headDim;
  const perLayer = 4 * shape.hiddenSize + kv + 3 * shape.intermediateSize;
  return (shape.numLayers * perLayer + 2 * Math.min(headWidth, shape.vocabSize)) * 4;
}

/**
 * The shape of `model` (`tiny`, `small` or a checkpoint folder) from its config.json alone, or undefined when there
 * is no readable config.json: loading the model reports what is wrong with it.
 */
export function readModelShape(model: string): ModelShape | undefined {
  if (isBuiltinModelName(model)) {
    const shape = BUILTIN_MODELS[model];
    return {
      maxPositions: BUILTIN_MAX_POSITIONS,
      numLayers: shape.num_hidden_layers,
      numHeads: shape.num_attention_heads,
      numKvHeads: shape.num_key_value_heads,
      headDim: shape.hidden_size / shape.num_attention_heads,
      hiddenSize: shape.hidden_size,
      intermediateSize: shape.intermediate_size,
      vocabSize: shape.vocab_size,
      tiedEmbeddings: false,
      source: `built-in ${model}`,
    };
  }
  const file = join(model, 'config.json');
  if (!existsSync(file)) return undefined;
  try {
    const config = parseModelConfig(JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>, file);
    return {
      maxPositions: config.maxPositionEmbeddings,
      numLayers: config.numLayers,
      numHeads: config.numHeads,
      numKvHeads: config.numKvHeads,
      headDim: config.headDim,
      hiddenSize: config.hiddenSize,
      intermediateSize: config.intermediateSize,
      vocabSize: config.vocabSize,
      tiedEmbeddings: config.tieWordEmbeddings,
      source: file,
    };
  } catch {
    return undefined;
  }
}
