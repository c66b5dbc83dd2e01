import {
  expectedWeightShapes,
  parseModelConfig,
  SeededRandom,
  type ArchitectureName,
  type DecoderConfig,
  type HostTensor,
} from '../src/index.js';

/** Qwen2.5's published shapes (config.json's size keys as on the Hub): a folder of one tells an engine a model's size. */
export const QWEN25_CONFIGS = {
  '0.5B': { hidden_size: 896, intermediate_size: 4864, num_hidden_layers: 24, num_attention_heads: 14 },
  '1.5B': { hidden_size: 1536, intermediate_size: 8960, num_hidden_layers: 28, num_attention_heads: 12 },
} as const;

/** The config.json of a Qwen2.5 model of `size`, as published (no weights come with it). */
export function qwen25ConfigJson(size: keyof typeof QWEN25_CONFIGS): Record<string, unknown> {
  return {
    architectures: ['Qwen2ForCausalLM'],
    model_type: 'qwen2',
    ...QWEN25_CONFIGS[size],
    num_key_value_heads: 2,
    vocab_size: 151936,
    max_position_embeddings: 32768,
    tie_word_embeddings: true,
  };
}

/** config.json of a very small decoder of each family (GQA 4:2, 2 layers). */
export function tinyConfigJson(architecture: ArchitectureName, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const modelType = { LlamaForCausalLM: 'llama', Qwen2ForCausalLM: 'qwen2', Qwen3ForCausalLM: 'qwen3' }[architecture];
  return {
    architectures: [architecture],
    model_type: modelType,
    vocab_size: 48,
    hidden_size: 32,
    intermediate_size: 40,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    rms_norm_eps: 1e-6,
    rope_theta: 10000,
    max_position_embeddings: 128,
    tie_word_embeddings: false,
    ...(architecture === 'Qwen3ForCausalLM' ? { head_dim: 12 } : {}),
    ...extra,
  };
}

/**
 * A decoder whose every tensor is random (norm weights around 1, biases nonzero, larger std than the HF init), so
 * each feature visibly changes the logits.
 */
export function randomWeights(configJson: Record<string, unknown>, seed = 1): { config: DecoderConfig; weights: Map<string, HostTensor> } {
  const config = parseModelConfig(configJson);
  const rng = new SeededRandom(seed + 1000);
  const weights = new Map<string, HostTensor>();
  for (const [name, shape] of expectedWeightShapes(config)) {
    const size = shape.reduce((a, b) => a * b, 1);
    const data = rng.fillNormal(new Float32Array(size), name.endsWith('norm.weight') ? 0.2 : name.endsWith('.bias') ? 0.3 : 0.15);
    if (name.endsWith('norm.weight')) for (let i = 0; i < data.length; i++) data[i] = data[i]! + 1;
    weights.set(name, { shape, data });
  }
  return { config, weights };
}

/** log softmax of one row of logits, in float64 (a plain-JavaScript reference for the model's log-probs). */
export function logSoftmax(logits: readonly number[]): number[] {
  const max = Math.max(...logits);
  const lse = max + Math.log(logits.reduce((s, z) => s + Math.exp(z - max), 0));
  return logits.map((z) => z - lse);
}
