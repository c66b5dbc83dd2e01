import { lossColumn, type LossFunction, type LossInput, type TensorOps } from '@drmas/core';
import type { ArchitectureName } from '@drmas/models';
import { PolicyLossFunction, type PolicyLossSettings } from '@drmas/plugin-algorithms';

export { randomWeights, tinyConfigJson } from '../../../models/test/modelFixtures.js';
export { makeBatch, updateRequest } from '../../backend-tfjs/test/trainingFixtures.js';

/** Advantage-weighted token-mean log-likelihood. */
export const weightedLogLikelihood: LossFunction = {
  compute<T>(ops: TensorOps<T>, input: LossInput<T>) {
    const weighted = ops.mul(ops.mul(input.logProbs, lossColumn(input, 'advantages')), input.responseMask);
    return { loss: ops.div(ops.neg(ops.sum(weighted)), input.totals.tokens), metrics: {} };
  },
};

/**
 * A weighted log-likelihood plus an entropy term, so that both upstream gradients reach the head (its weighted part
 * also a metric).
 */
export const weightedLikelihoodWithEntropy: LossFunction = {
  needsEntropy: true,
  compute<T>(ops: TensorOps<T>, input: LossInput<T>) {
    const weighted = ops.mul(ops.mul(input.logProbs, lossColumn(input, 'advantages')), input.responseMask);
    const entropy = ops.mul(input.entropy!, input.responseMask);
    const total = ops.add(ops.neg(ops.sum(weighted)), ops.mul(ops.sum(entropy), 0.3));
    return { loss: ops.div(total, input.totals.tokens), metrics: { 'actor/weighted': ops.div(ops.sum(weighted), input.totals.tokens) } };
  },
};

/** The central difference (f(w + eps) - f(w - eps)) / 2 eps of `loss` in one value of `data`, put back after. */
export async function centralDifference(data: Float32Array, index: number, eps: number, loss: () => Promise<number>): Promise<number> {
  const original = data[index]!;
  data[index] = original + eps;
  const plus = await loss();
  data[index] = original - eps;
  const minus = await loss();
  data[index] = original;
  return (plus - minus) / (2 * eps);
}

/** max |a - b| over max |b|: the error relative to the tensor's scale (the absolute error where b is all 0). */
export function relativeError(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < b.length; i++) {
    diff = Math.max(diff, Math.abs(a[i]! - b[i]!));
    scale = Math.max(scale, Math.abs(b[i]!));
  }
  return scale === 0 ? diff : diff / scale;
}

export function maxAbsDiff(a: number[][], b: number[][]): number {
  if (a.length !== b.length) return Infinity;
  let m = 0;
  a.forEach((row, i) => {
    const other = b[i]!;
    if (row.length !== other.length) m = Infinity;
    row.forEach((x, j) => (m = Math.max(m, Math.abs(x - other[j]!))));
  });
  return m;
}

/** Small random models of each architecture and feature the onnx graphs cover. */
export const ARCHITECTURE_CASES: { label: string; architecture: ArchitectureName; extra: Record<string, unknown> }[] = [
  {
    label: 'Llama, llama3 rope scaling, untied',
    architecture: 'LlamaForCausalLM',
    extra: {
      rope_scaling: { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 16 },
    },
  },
  { label: 'Llama, tied embeddings', architecture: 'LlamaForCausalLM', extra: { tie_word_embeddings: true } },
  { label: 'Qwen2 (q/k/v bias), untied', architecture: 'Qwen2ForCausalLM', extra: {} },
  { label: 'Qwen2 (q/k/v bias), tied', architecture: 'Qwen2ForCausalLM', extra: { tie_word_embeddings: true } },
  { label: 'Qwen3 (q/k norm), untied', architecture: 'Qwen3ForCausalLM', extra: {} },
  { label: 'Qwen3 (q/k norm), tied', architecture: 'Qwen3ForCausalLM', extra: { tie_word_embeddings: true } },
];

/** The algorithms plugin's policy loss: vanilla PPO with dual clip, token-mean, no KL or entropy, unless overridden. */
export function policyLoss(settings: Partial<PolicyLossSettings> = {}): PolicyLossFunction {
  return new PolicyLossFunction({
    variant: 'vanilla',
    clipRatioLow: 0.2,
    clipRatioHigh: 0.28,
    clipRatioC: 3,
    aggregation: 'token-mean',
    klCoef: 0,
    klType: 'low_var_kl',
    entropyCoef: 0,
    ...settings,
  });
}
