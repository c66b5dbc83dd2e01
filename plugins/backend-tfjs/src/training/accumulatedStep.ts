import * as tf from '@tensorflow/tfjs-core';
import { partMicroBatches, type OptimizerSettings } from '@drmas/core';
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
  /** With `microBatchParts`: the norm of each part's share of the gradient (0 for a part with no micro-batch). */
  partGradNorms?: number[];
}

/** The global norm of a set of gradient tensors. */
async function globalNorm(grads: Iterable<tf.Tensor>): Promise<number> {
  const list = [...grads];
  if (list.length === 0) return 0;
  const normTensor = tf.tidy(() => tf.sqrt(tf.addN(list.map((g) => tf.sum(tf.square(g))))));
  const norm = (await normTensor.data())[0]!;
  normTensor.dispose();
  return norm;
}

/** Adds `grads` into `into` by name, taking ownership of them. */
function accumulate(into: Map<string, tf.Tensor>, grads: Iterable<[string, tf.Tensor]>): void {
  for (const [name, g] of grads) {
    const previous = into.get(name);
    if (previous) {
      into.set(name, tf.add(previous, g));
      previous.dispose();
      g.dispose();
    } else {
      into.set(name, g);
    }
  }
}

/**
 * One optimizer step over micro-batches: each micro-batch's loss is differentiated with respect to `weights` and the
 * gradients are summed; the global norm is taken before clipping (like torch's clip_grad_norm_), a non-finite norm
 * or one `acceptGradNorm` refuses skips the step, else the gradient is clipped to `settings.maxGradNorm` and AdamW
 * applies it. The policy's and the critic's updates share it. With `microBatchParts` (consecutive micro-batches of
 * one part, e.g. one agent's rows, as `partMicroBatches` cuts them) each part's gradient is summed on its own and its
 * norm taken before it joins the total. `measureOnly` stops after the norms.
 */
export async function accumulatedStep(options: {
  weights: Map<string, tf.Variable>;
  microBatches: readonly Int32Array[];
  lossOf: (micro: Int32Array) => MicroBatchLoss;
  optimizer: AdamW;
  settings: OptimizerSettings;
  lrScale: number;
  acceptGradNorm?: (gradNorm: number) => boolean;
  /** The part of each micro-batch (a part's micro-batches consecutive), and how many parts there are. */
  microBatchParts?: { parts: readonly number[]; count: number };
  measureOnly?: boolean;
}): Promise<AccumulatedStep> {
  const { weights, settings } = options;
  const variables = [...weights.values()];
  const names = [...weights.keys()];
  const accumulated = new Map<string, tf.Tensor>();
  const split = options.microBatchParts;
  const partGradNorms = split ? new Array<number>(split.count).fill(0) : undefined;
  // The current part's gradient, until its last micro-batch: its norm is taken, then it joins `accumulated`.
  const partial = new Map<string, tf.Tensor>();
  const closePart = async (part: number) => {
    partGradNorms![part] = await globalNorm(partial.values());
    accumulate(accumulated, partial);
    partial.clear();
  };
  let lossSum = 0;
  const sums: Record<string, number> = {};
  try {
    for (const [m, micro] of options.microBatches.entries()) {
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
      const named = variables.flatMap((v, i): Array<[string, tf.Tensor]> => (grads[v.name] ? [[names[i]!, grads[v.name]!]] : []));
      accumulate(split ? partial : accumulated, named);
      const part = split?.parts[m];
      if (part !== undefined && split!.parts[m + 1] !== part) await closePart(part);
    }
    if (options.microBatches.length === 0) variables.forEach((v, i) => accumulated.set(names[i]!, tf.zerosLike(v)));
    const gradNorm = await globalNorm(accumulated.values());
    const measured = { lossSum, sums, gradNorm, partGradNorms };
    if (!Number.isFinite(gradNorm)) return { ...measured, skipped: true, nonFinite: true };
    if (options.measureOnly || (options.acceptGradNorm && !options.acceptGradNorm(gradNorm)))
      return { ...measured, skipped: true, nonFinite: false };
    const maxNorm = settings.maxGradNorm;
    const clipCoef = maxNorm > 0 ? Math.min(1, maxNorm / (gradNorm + 1e-6)) : 1;
    if (clipCoef < 1) {
      for (const [name, g] of accumulated) {
        accumulated.set(name, tf.mul(g, clipCoef));
        g.dispose();
      }
    }
    options.optimizer.apply(weights, accumulated, settings, options.lrScale);
    return { ...measured, skipped: false, nonFinite: false };
  } finally {
    for (const g of accumulated.values()) g.dispose();
    for (const g of partial.values()) g.dispose();
  }
}

/** `rows` split into consecutive micro-batches of `size` rows (all of them when `size` is 0). */
export function microBatchesOf(rows: Int32Array, size: number): Int32Array[] {
  return partMicroBatches(rows, size).map((micro) => micro.rows);
}
