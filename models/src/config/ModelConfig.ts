import { ModelConfigError } from './ModelErrors.js';

export type ArchitectureName = 'LlamaForCausalLM' | 'Qwen2ForCausalLM' | 'Qwen3ForCausalLM';

/** A feature that is always on/off for an architecture, or read from a boolean config key (with its default). */
type FeatureSource = boolean | { key: string; default: boolean };

interface ArchitectureSpec {
  modelType: string;
  /** Defaults of the transformers config class (`LlamaConfig`, `Qwen2Config`, `Qwen3Config`). */
  defaults: {
    vocab_size: number;
    hidden_size: number;
    intermediate_size: number;
    num_hidden_layers: number;
    num_attention_heads: number;
    /** `undefined`: falls back to `num_attention_heads`. */
    num_key_value_heads?: number;
    /** `undefined`: `hidden_size / num_attention_heads`. */
    head_dim?: number;
    rms_norm_eps: number;
    rope_theta: number;
    max_position_embeddings: number;
    tie_word_embeddings: boolean;
    initializer_range: number;
    bos_token_id?: number;
    eos_token_id?: number;
  };
  qkvBias: FeatureSource;
  outputBias: FeatureSource;
  mlpBias: FeatureSource;
  /** Per-head RMSNorm of queries and keys before the rotary embedding (Qwen3). */
  qkNorm: FeatureSource;
}

const attentionBias = { key: 'attention_bias', default: false };

/** What distinguishes each supported family, as transformers' modeling code reads it from config.json. */
export const ARCHITECTURES: Record<ArchitectureName, ArchitectureSpec> = {
  LlamaForCausalLM: {
    modelType: 'llama',
    defaults: {
      vocab_size: 32000,
      hidden_size: 4096,
      intermediate_size: 11008,
      num_hidden_layers: 32,
      num_attention_heads: 32,
      rms_norm_eps: 1e-6,
      rope_theta: 10000,
      max_position_embeddings: 2048,
      tie_word_embeddings: false,
      initializer_range: 0.02,
      bos_token_id: 1,
      eos_token_id: 2,
    },
    qkvBias: attentionBias,
    outputBias: attentionBias,
    mlpBias: { key: 'mlp_bias', default: false },
    qkNorm: false,
  },
  Qwen2ForCausalLM: {
    modelType: 'qwen2',
    defaults: {
      vocab_size: 151936,
      hidden_size: 4096,
      intermediate_size: 22016,
      num_hidden_layers: 32,
      num_attention_heads: 32,
      num_key_value_heads: 32,
      rms_norm_eps: 1e-6,
      rope_theta: 10000,
      max_position_embeddings: 32768,
      tie_word_embeddings: false,
      initializer_range: 0.02,
    },
    qkvBias: true,
    outputBias: false,
    mlpBias: false,
    qkNorm: false,
  },
  Qwen3ForCausalLM: {
    modelType: 'qwen3',
    defaults: {
      vocab_size: 151936,
      hidden_size: 4096,
      intermediate_size: 22016,
      num_hidden_layers: 32,
      num_attention_heads: 32,
      num_key_value_heads: 32,
      head_dim: 128,
      rms_norm_eps: 1e-6,
      rope_theta: 10000,
      max_position_embeddings: 32768,
      tie_word_embeddings: false,
      initializer_range: 0.02,
    },
    qkvBias: attentionBias,
    outputBias: attentionBias,
    mlpBias: false,
    qkNorm: true,
  },
};

export type RopeScaling =
  | { type: 'linear'; factor: number }
  | {
      type: 'llama3';
      factor: number;
      lowFreqFactor: number;
      highFreqFactor: number;
      originalMaxPositionEmbeddings: number;
    };

/** A decoder's shape and features, resolved from config.json with transformers' defaults. */
export interface DecoderConfig {
  architecture: ArchitectureName;
  modelType: string;
  vocabSize: number;
  hiddenSize: number;
  intermediateSize: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  rmsNormEps: number;
  ropeTheta: number;
  ropeScaling?: RopeScaling;
  maxPositionEmbeddings: number;
  tieWordEmbeddings: boolean;
  qkvBias: boolean;
  outputBias: boolean;
  mlpBias: boolean;
  qkNorm: boolean;
  initializerRange: number;
  bosTokenId?: number;
  /** One or several end-of-sequence ids, as config.json gives them. */
  eosTokenIds: number[];
  /** The config.json object as read (written back on save, so unknown keys survive a round trip). */
  raw: Record<string, unknown>;
}

const MODEL_TYPES: Record<string, ArchitectureName> = Object.fromEntries(
  Object.entries(ARCHITECTURES).map(([name, spec]) => [spec.modelType, name as ArchitectureName]),
);

export function isArchitectureName(name: string): name is ArchitectureName {
  return Object.prototype.hasOwnProperty.call(ARCHITECTURES, name);
}

/** Resolves a parsed config.json the way transformers' config class and modeling code read it. */
export function parseModelConfig(raw: Record<string, unknown>, file = 'config.json'): DecoderConfig {
  const architecture = detectArchitecture(raw, file);
  const spec = ARCHITECTURES[architecture];
  const d = spec.defaults;

  const num = (key: keyof ArchitectureSpec['defaults'], fallback?: number): number => {
    const value = raw[key] ?? fallback ?? d[key];
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new ModelConfigError(`expected a number, got ${JSON.stringify(value)}`, { file, key });
    }
    return value;
  };
  const feature = (source: FeatureSource): boolean => {
    if (typeof source === 'boolean') return source;
    const value = raw[source.key] ?? source.default;
    if (typeof value !== 'boolean') {
      throw new ModelConfigError(`expected true or false, got ${JSON.stringify(value)}`, { file, key: source.key });
    }
    return value;
  };

  const hiddenAct = raw.hidden_act ?? 'silu';
  if (hiddenAct !== 'silu') {
    throw new ModelConfigError(`unsupported activation ${JSON.stringify(hiddenAct)}; only "silu" is implemented`, {
      file,
      key: 'hidden_act',
    });
  }
  if (raw.use_sliding_window === true) {
    throw new ModelConfigError('sliding-window attention is not implemented', {
      file,
      key: 'use_sliding_window',
      hint: 'set it to false',
    });
  }

  // transformers 5 writes each layer's attention; a "sliding_attention" layer can come without use_sliding_window.
  const layerTypes = Array.isArray(raw.layer_types) ? (raw.layer_types as unknown[]) : [];
  const windowed = layerTypes.findIndex((type) => type !== 'full_attention');
  if (windowed >= 0) {
    throw new ModelConfigError(`layer ${windowed} has ${JSON.stringify(layerTypes[windowed])}; only "full_attention" is implemented`, {
      file,
      key: `layer_types[${windowed}]`,
      hint: 'set every entry of layer_types to "full_attention" (and use_sliding_window to false)',
    });
  }
  const hiddenSize = num('hidden_size');
  const numHeads = num('num_attention_heads');
  const numKvHeads = raw.num_key_value_heads == null ? (d.num_key_value_heads ?? numHeads) : num('num_key_value_heads');
  const headDim = raw.head_dim == null ? (d.head_dim ?? hiddenSize / numHeads) : num('head_dim');
  if (!Number.isInteger(headDim) || headDim % 2 !== 0) {
    throw new ModelConfigError(`head dimension ${headDim} must be an even integer`, { file, key: 'head_dim' });
  }
  if (numHeads % numKvHeads !== 0) {
    throw new ModelConfigError(`num_attention_heads (${numHeads}) must be a multiple of num_key_value_heads (${numKvHeads})`, {
      file,
      key: 'num_key_value_heads',
    });
  }
  const ropeParameters = (raw.rope_parameters ?? undefined) as Record<string, unknown> | undefined;
  const ropeTheta = num('rope_theta', ropeParameters?.rope_theta as number | undefined);
  const eos = raw.eos_token_id ?? d.eos_token_id;
  const eosTokenIds = eos == null ? [] : Array.isArray(eos) ? (eos as number[]) : [eos as number];
  const bos = raw.bos_token_id ?? d.bos_token_id;

  return {
    architecture,
    modelType: spec.modelType,
    vocabSize: num('vocab_size'),
    hiddenSize,
    intermediateSize: num('intermediate_size'),
    numLayers: num('num_hidden_layers'),
    numHeads,
    numKvHeads,
    headDim,
    rmsNormEps: num('rms_norm_eps'),
    ropeTheta,
    ropeScaling: parseRopeScaling(raw.rope_scaling ?? ropeParameters, file),
    maxPositionEmbeddings: num('max_position_embeddings'),
    tieWordEmbeddings: feature({ key: 'tie_word_embeddings', default: d.tie_word_embeddings }),
    qkvBias: feature(spec.qkvBias),
    outputBias: feature(spec.outputBias),
    mlpBias: feature(spec.mlpBias),
    qkNorm: feature(spec.qkNorm),
    initializerRange: num('initializer_range'),
    bosTokenId: typeof bos === 'number' ? bos : undefined,
    eosTokenIds,
    raw,
  };
}

function detectArchitecture(raw: Record<string, unknown>, file: string): ArchitectureName {
  const listed = Array.isArray(raw.architectures) ? (raw.architectures as unknown[]) : [];
  for (const name of listed) if (typeof name === 'string' && isArchitectureName(name)) return name;
  const byType = typeof raw.model_type === 'string' ? MODEL_TYPES[raw.model_type] : undefined;
  if (byType) return byType;
  throw new ModelConfigError(
    `unsupported model (architectures ${JSON.stringify(raw.architectures)}, model_type ${JSON.stringify(raw.model_type)})`,
    { file, key: 'architectures', hint: `supported: ${Object.keys(ARCHITECTURES).join(', ')}` },
  );
}

function parseRopeScaling(value: unknown, file: string): RopeScaling | undefined {
  if (value == null) return undefined;
  const s = value as Record<string, unknown>;
  const type = s.rope_type ?? s.type ?? 'default';
  const key = 'rope_scaling';
  const numberAt = (name: string): number => {
    const v = s[name];
    if (typeof v !== 'number') throw new ModelConfigError(`missing number '${name}'`, { file, key: `${key}.${name}` });
    return v;
  };
  switch (type) {
    case 'default':
      return undefined;
    case 'linear':
      return { type: 'linear', factor: numberAt('factor') };
    case 'llama3':
      return {
        type: 'llama3',
        factor: numberAt('factor'),
        lowFreqFactor: numberAt('low_freq_factor'),
        highFreqFactor: numberAt('high_freq_factor'),
        originalMaxPositionEmbeddings: numberAt('original_max_position_embeddings'),
      };
    default:
      throw new ModelConfigError(`unsupported rope type ${JSON.stringify(type)}`, {
        file,
        key: `${key}.rope_type`,
        hint: 'supported: default, linear, llama3',
      });
  }
}

/** HF tensor names and shapes of a decoder, in checkpoint order. */
export function expectedWeightShapes(config: DecoderConfig): Map<string, number[]> {
  const { hiddenSize: h, intermediateSize: m, vocabSize: v, numHeads, numKvHeads, headDim } = config;
  const shapes = new Map<string, number[]>();
  shapes.set('model.embed_tokens.weight', [v, h]);
  for (let i = 0; i < config.numLayers; i++) {
    const p = `model.layers.${i}`;
    shapes.set(`${p}.input_layernorm.weight`, [h]);
    for (const [proj, out] of [
      ['q_proj', numHeads * headDim],
      ['k_proj', numKvHeads * headDim],
      ['v_proj', numKvHeads * headDim],
    ] as const) {
      shapes.set(`${p}.self_attn.${proj}.weight`, [out, h]);
      if (config.qkvBias) shapes.set(`${p}.self_attn.${proj}.bias`, [out]);
    }
    shapes.set(`${p}.self_attn.o_proj.weight`, [h, numHeads * headDim]);
    if (config.outputBias) shapes.set(`${p}.self_attn.o_proj.bias`, [h]);
    if (config.qkNorm) {
      shapes.set(`${p}.self_attn.q_norm.weight`, [headDim]);
      shapes.set(`${p}.self_attn.k_norm.weight`, [headDim]);
    }
    shapes.set(`${p}.post_attention_layernorm.weight`, [h]);
    for (const [proj, shape] of [
      ['gate_proj', [m, h]],
      ['up_proj', [m, h]],
      ['down_proj', [h, m]],
    ] as const) {
      shapes.set(`${p}.mlp.${proj}.weight`, [...shape]);
      if (config.mlpBias) shapes.set(`${p}.mlp.${proj}.bias`, [shape[0]]);
    }
  }
  shapes.set('model.norm.weight', [h]);
  if (!config.tieWordEmbeddings) shapes.set('lm_head.weight', [v, h]);
  return shapes;
}

/** The config.json to write for a decoder: the original keys plus what transformers needs to load it. */
export function configJsonFor(config: DecoderConfig): Record<string, unknown> {
  return {
    ...config.raw,
    architectures: [config.architecture],
    model_type: config.modelType,
    torch_dtype: 'float32',
  };
}
