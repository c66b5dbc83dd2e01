import * as tf from '@tensorflow/tfjs';
import { DecoderModel, type HostTensor } from '../src/model/DecoderModel.js';
import { parseModelConfig, type ArchitectureName, type DecoderConfig } from '../src/model/ModelConfig.js';
import { SeededRandom } from '../src/model/SeededRandom.js';
import { leftPad } from '../src/model/batchLayout.js';

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
 * A model whose every tensor is random (norm weights around 1, biases nonzero, larger std than the HF init), so
 * each feature visibly changes the logits.
 */
export function randomModel(configJson: Record<string, unknown>, seed = 1): DecoderModel {
  const config = parseModelConfig(configJson);
  const model = DecoderModel.randomInit(config, seed);
  const rng = new SeededRandom(seed + 1000);
  const tensors = new Map<string, HostTensor>();
  for (const [name, w] of model.weights) {
    const data = rng.fillNormal(new Float32Array(w.size), name.endsWith('norm.weight') ? 0.2 : name.endsWith('.bias') ? 0.3 : 0.15);
    if (name.endsWith('norm.weight')) for (let i = 0; i < data.length; i++) data[i] += 1;
    tensors.set(name, { shape: [...w.shape], data });
  }
  model.assignTensors(tensors);
  return model;
}

/** Logits `[rows][position][vocab]` of each row, run as one left-padded batch. */
export function batchLogits(model: DecoderModel, rows: number[][]): number[][][] {
  const batch = leftPad(rows);
  const flat = tf.tidy(() => {
    const ids = tf.tensor2d(batch.ids, [batch.rows, batch.columns], 'int32');
    const { hidden } = model.forward({ inputIds: ids, positions: batch.positions, keyValid: batch.valid });
    return model.logits(hidden);
  });
  const data = flat.dataSync();
  flat.dispose();
  const v = model.config.vocabSize;
  return rows.map((row, r) =>
    row.map((_, j) => {
      const o = (r * batch.columns + batch.padding[r] + j) * v;
      return Array.from(data.subarray(o, o + v));
    }),
  );
}

/** log softmax of one row of logits, in float64 (a plain-JavaScript reference for the model's log-probs). */
export function logSoftmax(logits: readonly number[]): number[] {
  const max = Math.max(...logits);
  const lse = max + Math.log(logits.reduce((s, z) => s + Math.exp(z - max), 0));
  return logits.map((z) => z - lse);
}

export function maxAbsDiff(a: number[][][], b: number[][][]): number {
  let m = 0;
  a.forEach((rows, i) => rows.forEach((row, j) => row.forEach((x, k) => (m = Math.max(m, Math.abs(x - b[i][j][k]))))));
  return m;
}

export type { DecoderConfig };
