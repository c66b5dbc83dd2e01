import * as tf from '@tensorflow/tfjs-core';
import type { OptimizerSettings } from '@drmas/core';
import type { AdamW } from './AdamW.js';

export interface MicroBatchLoss {
  loss: tf.Scalar;
  /** Scalars to sum over the micro-batches (kept past the gradient's tidy; disposed here). */
  sums: Record<string, tf.Tensor>;
}

export interface AccumulatedStep {
  lossSum: number;
  sums: Record<string, number>;
  /** Global norm of the accumulated gradient before clipping. */
  gradNorm: number;
  skipped: boolean;
  /** The norm was not finite (the step was skipped for it). */
  nonFinite: boolean;
}

/**
 * One optimizer step over micro-batches: each micro-batch's loss is differentiated with respect to `weights` and the
 * gradients are summed; the global norm is taken before clipping (like torch's clip_grad_norm_), a non-finite norm
 * or one `acceptGradNorm` refuses skips the step, else the gradient is clipped to `settings.maxGradNorm` and AdamW
 * applies it. The policy's and the critic's updates share it.
 */
export async function accumulatedStep(options: {
  weights: Map<string, tf.Variable>;
  microBatches: readonly Int32Array[];
  lossOf: (micro: Int32Array) => MicroBatchLoss;
  optimizer: AdamW;
  settings: OptimizerSettings;
  lrScale: number;
  acceptGradNorm?: (gradNorm: number) => boolean;
}): Promise<AccumulatedStep> {
  const { weights, settings } = options;
  const variables = [...weights.values()];
  const names = [...weights.keys()];
  const accumulated = new Map<string, tf.Tensor>();
  let lossSum = 0;
  const sums: Record<string, number> = {};
  try {
    for (const micro of options.microBatches) {
      const kept: Record<string, tf.Tensor> = {};
      const { value, grads } = tf.variableGrads(() => {
        const out = options.lossOf(micro);
        for (const [k, t] of Object.entries(out.sums)) kept[k] = tf.keep(t);
        return out.loss;
      }, variables);
      lossSum += (await value.data())[0]!;
      value.dispose();
      for (const [k, t] of Object.entries(kept)) {
        sums[k] = (sums[k] ?? 0) + (await t.data())[0]!;
        t.dispose();
      }
      variables.forEach((v, i) => {
        const g = grads[v.name];
        if (!g) return;
        const previous = accumulated.get(names[i]!);
        if (previous) {
          accumulated.set(names[i]!, tf.add(previous, g));
          previous.dispose();
          g.dispose();
        } else {
          accumulated.set(names[i]!, g);
        }
      });
    }
    if (options.microBatches.length === 0) variables.forEach((v, i) => accumulated.set(names[i]!, tf.zerosLike(v)));
    const normTensor = tf.tidy(() => tf.sqrt(tf.addN([...accumulated.values()].map((g) => tf.sum(tf.square(g))))));
    const gradNorm = (await normTensor.data())[0]!;
    normTensor.dispose();
    if (!Number.isFinite(gradNorm)) return { lossSum, sums, gradNorm, skipped: true, nonFinite: true };
    if (options.acceptGradNorm && !options.acceptGradNorm(gradNorm)) return { lossSum, sums, gradNorm, skipped: true, nonFinite: false };
    const maxNorm = settings.maxGradNorm;
    const clipCoef = maxNorm > 0 ? Math.min(1, maxNorm / (gradNorm + 1e-6)) : 1;
    if (clipCoef < 1) {
      for (const [name, g] of accumulated) {
        accumulated.set(name, tf.mul(g, clipCoef));
        g.dispose();
      }
    }
    options.optimizer.apply(weights, accumulated, settings, options.lrScale);
    return { lossSum, sums, gradNorm, skipped: false, nonFinite: false };
  } finally {
    for (const g of accumulated.values()) g.dispose();
  }
}

/** `rows` split into consecutive micro-batches of `size` rows (all of them when `size` is 0). */
export function microBatchesOf(rows: Int32Array, size: number): Int32Array[] {
  const step = Math.max(1, Math.floor(size || rows.length));
  const out: Int32Array[] = [];
  for (let start = 0; start < rows.length; start += step) out.push(rows.subarray(start, Math.min(rows.length, start + step)));
  return out;
}
