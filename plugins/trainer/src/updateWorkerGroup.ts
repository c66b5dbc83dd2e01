import { selectRows, type LossFunction, type Metrics, type Rng, type WorkerGroupBatch } from '@drmas/core';
import type { TrainedWorkerGroup } from './WorkerGroupsService.js';

function rowsOf(batch: WorkerGroupBatch): { prompts: number[][]; responses: number[][] } {
  const L = batch.responseLength;
  return {
    prompts: batch.promptIds.map((p) => Array.from(p)),
    responses: Array.from({ length: batch.rows }, (_, r) => Array.from(batch.responseIds.subarray(r * L, r * L + batch.responseLengths[r]))),
  };
}

/** Rows ordered by prompt + response length, so micro-batches and scoring chunks hold rows of similar length. */
function byLength(batch: WorkerGroupBatch, rows: readonly number[]): number[] {
  const length = (r: number) => batch.promptIds[r].length + batch.responseLengths[r];
  return [...rows].sort((a, b) => length(a) - length(b) || a - b);
}

/** Teacher-forced log-probs of every row at its sampling temperature, scored in length order (little padding) and returned in row order. */
async function scoreRows(engine: TrainedWorkerGroup['trainer'], batch: WorkerGroupBatch, prompts: number[][], responses: number[][]): Promise<number[][]> {
  const order = byLength(batch, prompts.map((_, r) => r));
  const temperatures = batch.temperatures ? order.map((r) => batch.temperatures![r]) : undefined;
  const scored = (await engine.score({ promptIds: order.map((r) => prompts[r]), responseIds: order.map((r) => responses[r]), temperatures })).logProbs;
  const out: number[][] = new Array(order.length);
  order.forEach((row, i) => { out[row] = scored[i]; });
  return out;
}

function flatten(rows: number[][], batch: WorkerGroupBatch): Float32Array {
  const out = new Float32Array(batch.rows * batch.responseLength);
  rows.forEach((row, r) => out.set(row, r * batch.responseLength));
  return out;
}

/** Mean and max of |p_rollout - p_trainer| over sampled tokens (veRL's `rollout_probs_diff`). */
function probabilityGap(batch: WorkerGroupBatch, old: Float32Array): { mean: number; max: number } {
  let sum = 0;
  let max = 0;
  let count = 0;
  for (let r = 0; r < batch.rows; r++) {
    for (let t = 0; t < batch.responseLengths[r]; t++) {
      const i = r * batch.responseLength + t;
      const gap = Math.abs(Math.exp(batch.rolloutLogProbs[i]) - Math.exp(old[i]));
      sum += gap;
      max = Math.max(max, gap);
      count++;
    }
  }
  return { mean: count ? sum / count : 0, max };
}

/**
 * One worker group's share of a training step: old log-probs from the trainer (the PPO reference point; the
 * rollout engine's are kept as sampled and their gap is logged), reference log-probs when the loss has a KL
 * term, `epochs` passes of `miniBatches` optimizer steps over shuffled rows (each mini-batch ordered by length, so
 * its micro-batches carry little padding; the loss is normalized by mini-batch totals, so order does not change
 * it), then weight sync to the rollout engine.
 */
export async function updateWorkerGroup(group: TrainedWorkerGroup, batch: WorkerGroupBatch, loss: LossFunction, rng: Rng, metrics: Metrics): Promise<void> {
  if (batch.rows === 0) return;
  const prefix = `actor/${group.id}`;
  const { prompts, responses } = rowsOf(batch);
  const old = flatten(await scoreRows(group.trainer, batch, prompts, responses), batch);
  const gap = probabilityGap(batch, old);
  metrics[`rollout/${group.id}/probs_diff_mean`] = gap.mean;
  metrics[`rollout/${group.id}/probs_diff_max`] = gap.max;
  const prepared: WorkerGroupBatch = { ...batch, oldLogProbs: old };
  if (loss.needsReference && group.reference) {
    prepared.refLogProbs = flatten(await scoreRows(group.reference, batch, prompts, responses), batch);
  }
  const { miniBatches, epochs, microBatchSize } = group.training;
  const sums: Record<string, number> = {};
  let updates = 0;
  let maxGradNorm = 0;
  let skipped = 0;
  let lr = 0;
  for (let epoch = 0; epoch < epochs; epoch++) {
    const order = rng.shuffle(Array.from({ length: batch.rows }, (_, i) => i));
    const size = Math.ceil(batch.rows / Math.min(miniBatches, batch.rows));
    for (let start = 0; start < order.length; start += size) {
      const result = await group.trainer.update({
        batch: selectRows(prepared, byLength(prepared, order.slice(start, start + size))),
        loss,
        microBatchSize,
        optimizer: {
          lr: group.training.lr, weightDecay: group.training.weightDecay, maxGradNorm: group.training.maxGradNorm,
          betas: group.training.betas, eps: group.training.eps, warmupSteps: group.training.warmupSteps, schedule: group.training.schedule,
        },
      });
      updates++;
      lr = result.learningRate;
      if (result.skipped) skipped++;
      if (Number.isFinite(result.gradNorm)) maxGradNorm = Math.max(maxGradNorm, result.gradNorm);
      sums.loss = (sums.loss ?? 0) + result.loss;
      sums.grad_norm = (sums.grad_norm ?? 0) + result.gradNorm;
      for (const [key, value] of Object.entries(result.metrics)) sums[key] = (sums[key] ?? 0) + value;
    }
  }
  for (const [key, value] of Object.entries(sums)) metrics[`${prefix}/${key.replace(/^actor\//, '')}`] = value / updates;
  metrics[`${prefix}/grad_norm_max`] = maxGradNorm;
  metrics[`${prefix}/lr`] = lr;
  metrics[`${prefix}/skipped_steps`] = skipped;
  metrics[`${prefix}/updates`] = updates;
  if (group.rollout !== group.trainer) await group.rollout.syncWeights(group.trainer);
}
