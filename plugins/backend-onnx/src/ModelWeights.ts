import type { WeightTensor } from '@drmas/core';
import {
  createBuiltinModel,
  expectedWeightShapes,
  isBuiltinModelName,
  loadCheckpoint,
  parseModelConfig,
  Tokenizer,
  type ArchitectureName,
  type DecoderConfig,
} from './tfjsBackend.js';
import { join } from 'node:path';

export interface ModelSource {
  /** `tiny` / `small` (built-in, initialised like the tfjs backend does for the same seed) or a checkpoint folder. */
  model: string;
  /** Initialisation seed of a built-in model (default 0). */
  seed?: number;
  /** Architecture of a built-in model (default Qwen2ForCausalLM); ignored for checkpoints. */
  architecture?: ArchitectureName;
}

export interface ModelWeights {
  config: DecoderConfig;
  weights: Map<string, WeightTensor>;
  tokenizer?: Tokenizer;
}

/**
 * A decoder's config, weights and tokenizer: built-in models through the tfjs package's model creator (so a seed
 * gives the same weights on both engines), checkpoints through its safetensors loader (only the decoder's tensors).
 */
export async function loadModelWeights(source: ModelSource): Promise<ModelWeights> {
  if (isBuiltinModelName(source.model)) {
    const { model, tokenizer } = createBuiltinModel(source.model, { seed: source.seed, architecture: source.architecture });
    try {
      return { config: model.config, weights: await model.exportTensors(), tokenizer };
    } finally {
      model.dispose();
    }
  }
  const probe = await loadCheckpoint(source.model, { filter: () => false });
  const config = parseModelConfig(probe.config, join(probe.dir, 'config.json'));
  const wanted = expectedWeightShapes(config);
  const checkpoint = await loadCheckpoint(source.model, { filter: (name) => wanted.has(name) });
  const tokenizer = checkpoint.tokenizerDir ? await Tokenizer.fromDirectory(checkpoint.tokenizerDir) : undefined;
  return { config, weights: checkpoint.tensors, tokenizer };
}
