import type { LossFunction, LossInput, TensorOps, WeightTensor, WorkerGroupBatch } from '@drmas/core';
import { DecoderModel } from '@drmas/plugin-backend-tfjs';
import { parseModelConfig, type ArchitectureName } from '@drmas/plugin-backend-tfjs';
import { SeededRandom } from '@drmas/plugin-backend-tfjs';

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

/** A tfjs model whose every tensor is random (norms around 1, biases nonzero), so each feature changes the logits. */
export function randomModel(configJson: Record<string, unknown>, seed = 1): DecoderModel {
  const config = parseModelConfig(configJson);
  const model = DecoderModel.randomInit(config, seed);
  const rng = new SeededRandom(seed + 1000);
  const tensors = new Map<string, WeightTensor>();
  for (const [name, w] of model.weights) {
    const data = rng.fillNormal(new Float32Array(w.size), name.endsWith('norm.weight') ? 0.2 : name.endsWith('.bias') ? 0.3 : 0.15);
    if (name.endsWith('norm.weight')) for (let i = 0; i < data.length; i++) data[i] += 1;
    tensors.set(name, { shape: [...w.shape], data });
  }
  model.assignTensors(tensors);
  return model;
}

/** Advantage-weighted token-mean log-likelihood. */
export const weightedLogLikelihood: LossFunction = {
  compute<T>(ops: TensorOps<T>, input: LossInput<T>) {
    const weighted = ops.mul(ops.mul(input.logProbs, input.advantages), input.responseMask);
    return { loss: ops.div(ops.neg(ops.sum(weighted)), input.totals.tokens), metrics: {} };
  },
};

export function makeBatch(pairs: [number[], number[]][]): WorkerGroupBatch {
  const rows = pairs.length;
  const responseLength = Math.max(...pairs.map(([, r]) => r.length));
  const responseIds = new Int32Array(rows * responseLength);
  const responseMask = new Float32Array(rows * responseLength);
  const advantages = new Float32Array(rows * responseLength);
  pairs.forEach(([, response], r) =>
    response.forEach((id, j) => {
      responseIds[r * responseLength + j] = id;
      responseMask[r * responseLength + j] = 1;
      advantages[r * responseLength + j] = r % 2 === 0 ? 1 : -0.5;
    }),
  );
  return {
    workerGroupId: 'test', agentIds: ['agent'], rows, responseLength, keys: [],
    promptIds: pairs.map(([p]) => Int32Array.from(p)),
    responseLengths: Int32Array.from(pairs, ([, r]) => r.length),
    responseIds, responseMask, advantages, rolloutLogProbs: new Float32Array(rows * responseLength),
  };
}

export function maxAbsDiff(a: number[][], b: number[][]): number {
  let m = 0;
  a.forEach((row, i) => {
    if (row.length !== b[i].length) m = Infinity;
    row.forEach((x, j) => (m = Math.max(m, Math.abs(x - b[i][j]))));
  });
  return m;
}
