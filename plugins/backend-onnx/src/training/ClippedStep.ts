import type { OptimizerSettings, WeightTensor } from '@drmas/core';
import type * as OrtModule from 'onnxruntime-node';
import type { HostAdamW } from './HostAdamW.js';
import { TrainingNames, type TrainingGraph } from './TrainingGraph.js';

/**
 * Adds one run's gradient outputs (`grad/<weight>`, and the gathered rows of an embedding) into `buffers`, so the
 * micro-batches of a step accumulate in place.
 */
export function accumulateGradients(
  buffers: Map<string, Float32Array>,
  out: Record<string, OrtModule.Tensor>,
  graph: Pick<TrainingGraph, 'gradients' | 'rowGradients'>,
): void {
  for (const name of graph.gradients) {
    const buffer = buffers.get(name)!;
    const grad = out[TrainingNames.gradient(name)]!.data as Float32Array;
    for (let i = 0; i < buffer.length; i++) buffer[i]! += grad[i]!;
  }
  for (const { weight, rows, ids } of graph.rowGradients) addRows(buffers.get(weight)!, out[ids]!, out[rows]!);
}

/** Adds row `n` of `rows` into row `ids[n]` of `into`, in index order (so repeated ids sum the same way every run). */
function addRows(into: Float32Array, ids: OrtModule.Tensor, rows: OrtModule.Tensor): void {
  const index = ids.data as BigInt64Array;
  const data = rows.data as Float32Array;
  const width = index.length > 0 ? data.length / index.length : 0;
  for (let n = 0; n < index.length; n++) {
    const at = Number(index[n]!) * width;
    for (let j = 0; j < width; j++) into[at + j]! += data[n * width + j]!;
  }
}

/** The global norm of `buffers` (torch's `clip_grad_norm_` over them), its squares summed in float64. */
export function globalNorm(buffers: Iterable<Float32Array>): number {
  let squares = 0;
  for (const g of buffers) for (let i = 0; i < g.length; i++) squares += g[i]! * g[i]!;
  return Math.sqrt(squares);
}

export interface ClippedStep {
  /** Global norm of the accumulated gradient before clipping (torch's clip_grad_norm_). */
  gradNorm: number;
  skipped: boolean;
  /** The norm was not finite (the step was skipped for it). */
  nonFinite: boolean;
}

/**
 * One optimizer step as the tfjs backend's `accumulatedStep` takes it: a non-finite norm, or one `acceptGradNorm`
 * refuses, skips the step; else the gradients are clipped in place to `settings.maxGradNorm` by global norm and
 * AdamW updates `weights`. The policy's and the critic's updates share it.
 */
export function clippedAdamWStep(options: {
  weights: Map<string, WeightTensor>;
  gradients: Map<string, Float32Array>;
  optimizer: HostAdamW;
  settings: OptimizerSettings;
  lrScale: number;
  acceptGradNorm?: (gradNorm: number) => boolean;
}): ClippedStep {
  const { gradients, settings } = options;
  const gradNorm = globalNorm(gradients.values());
  if (!Number.isFinite(gradNorm)) return { gradNorm, skipped: true, nonFinite: true };
  if (options.acceptGradNorm && !options.acceptGradNorm(gradNorm)) return { gradNorm, skipped: true, nonFinite: false };
  const clipCoef = settings.maxGradNorm > 0 ? Math.min(1, settings.maxGradNorm / (gradNorm + 1e-6)) : 1;
  if (clipCoef < 1) {
    const coef = Math.fround(clipCoef);
    for (const g of gradients.values()) for (let i = 0; i < g.length; i++) g[i]! *= coef;
  }
  options.optimizer.apply(options.weights, gradients, settings, options.lrScale);
  return { gradNorm, skipped: false, nonFinite: false };
}
