/**
 * The config.json of each model of issue 43 as published on the Hub (the Instruct releases where there are two;
 * Qwen3's are both), with its generation_config.json and the real tokenizer it ships with (REAL_TOKENIZERS: Qwen2.5's
 * vocabulary is Qwen3's without its last four added tokens). Every model ties its output head to the embedding.
 */
import { REAL_TOKENIZERS } from './realTokenizers.js';

export interface PublishedModel {
  /** The folder name a user downloads it into (the Hub repository's name). */
  folder: string;
  config: Record<string, unknown>;
  generationConfig: Record<string, unknown>;
  tokenizerDir: string;
}

const qwen25 = (size: Record<string, number>): Record<string, unknown> => ({
  architectures: ['Qwen2ForCausalLM'],
  attention_dropout: 0.0,
  bos_token_id: 151643,
  eos_token_id: 151645,
  hidden_act: 'silu',
  initializer_range: 0.02,
  max_position_embeddings: 32768,
  max_window_layers: 21,
  model_type: 'qwen2',
  num_key_value_heads: 2,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000.0,
  sliding_window: 32768,
  tie_word_embeddings: true,
  torch_dtype: 'bfloat16',
  use_cache: true,
  use_sliding_window: false,
  vocab_size: 151936,
  ...size,
});

const qwen3 = (size: Record<string, number>): Record<string, unknown> => ({
  architectures: ['Qwen3ForCausalLM'],
  attention_bias: false,
  attention_dropout: 0.0,
  bos_token_id: 151643,
  eos_token_id: 151645,
  head_dim: 128,
  hidden_act: 'silu',
  initializer_range: 0.02,
  max_position_embeddings: 40960,
  max_window_layers: 28,
  model_type: 'qwen3',
  num_attention_heads: 16,
  num_hidden_layers: 28,
  num_key_value_heads: 8,
  rms_norm_eps: 1e-6,
  rope_scaling: null,
  rope_theta: 1000000,
  sliding_window: null,
  tie_word_embeddings: true,
  torch_dtype: 'bfloat16',
  use_cache: true,
  use_sliding_window: false,
  vocab_size: 151936,
  ...size,
});

const QWEN25_GENERATION = {
  bos_token_id: 151643,
  do_sample: true,
  eos_token_id: [151645, 151643],
  pad_token_id: 151643,
  repetition_penalty: 1.05,
  temperature: 0.7,
  top_k: 20,
  top_p: 0.8,
};
const QWEN3_GENERATION = {
  bos_token_id: 151643,
  do_sample: true,
  eos_token_id: [151645, 151643],
  pad_token_id: 151643,
  temperature: 0.6,
  top_k: 20,
  top_p: 0.95,
};

/** By the name the examples and tests use. */
export const PUBLISHED_MODELS: Record<string, PublishedModel> = {
  'Qwen2.5-0.5B': {
    folder: 'Qwen2.5-0.5B-Instruct',
    config: qwen25({ hidden_size: 896, intermediate_size: 4864, num_attention_heads: 14, num_hidden_layers: 24 }),
    generationConfig: QWEN25_GENERATION,
    tokenizerDir: REAL_TOKENIZERS.qwen3,
  },
  'Qwen2.5-1.5B': {
    folder: 'Qwen2.5-1.5B-Instruct',
    config: qwen25({ hidden_size: 1536, intermediate_size: 8960, num_attention_heads: 12, num_hidden_layers: 28 }),
    generationConfig: QWEN25_GENERATION,
    tokenizerDir: REAL_TOKENIZERS.qwen3,
  },
  'Qwen3-0.6B': {
    folder: 'Qwen3-0.6B',
    config: qwen3({ hidden_size: 1024, intermediate_size: 3072 }),
    generationConfig: QWEN3_GENERATION,
    tokenizerDir: REAL_TOKENIZERS.qwen3,
  },
  'Qwen3-1.7B': {
    folder: 'Qwen3-1.7B',
    config: qwen3({ hidden_size: 2048, intermediate_size: 6144 }),
    generationConfig: QWEN3_GENERATION,
    tokenizerDir: REAL_TOKENIZERS.qwen3,
  },
  'Llama-3.2-1B': {
    folder: 'Llama-3.2-1B-Instruct',
    config: {
      architectures: ['LlamaForCausalLM'],
      attention_bias: false,
      attention_dropout: 0.0,
      bos_token_id: 128000,
      eos_token_id: [128001, 128008, 128009],
      head_dim: 64,
      hidden_act: 'silu',
      hidden_size: 2048,
      initializer_range: 0.02,
      intermediate_size: 8192,
      max_position_embeddings: 131072,
      mlp_bias: false,
      model_type: 'llama',
      num_attention_heads: 32,
      num_hidden_layers: 16,
      num_key_value_heads: 8,
      pretraining_tp: 1,
      rms_norm_eps: 1e-5,
      rope_scaling: {
        factor: 32.0,
        high_freq_factor: 4.0,
        low_freq_factor: 1.0,
        original_max_position_embeddings: 8192,
        rope_type: 'llama3',
      },
      rope_theta: 500000.0,
      tie_word_embeddings: true,
      torch_dtype: 'bfloat16',
      use_cache: true,
      vocab_size: 128256,
    },
    generationConfig: { bos_token_id: 128000, do_sample: true, eos_token_id: [128001, 128008, 128009], temperature: 0.6, top_p: 0.9 },
    tokenizerDir: REAL_TOKENIZERS.llama3,
  },
};

/**
 * `config` with `layers` layers and, when `headDim` is given, heads of that width (hidden = heads x headDim, the MLP
 * twice the hidden size): every other key as published (vocabulary, heads, KV heads, rope, biases, norms, tying).
 */
export function cutDown(config: Record<string, unknown>, layers: number, headDim?: number): Record<string, unknown> {
  const out: Record<string, unknown> = { ...config, num_hidden_layers: layers };
  if ('max_window_layers' in config) out.max_window_layers = layers;
  if (headDim !== undefined) {
    const hidden = (config.num_attention_heads as number) * headDim;
    Object.assign(out, { hidden_size: hidden, intermediate_size: 2 * hidden });
    if ('head_dim' in config) out.head_dim = headDim;
  }
  return out;
}
