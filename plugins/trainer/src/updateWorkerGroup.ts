import { rowsWithAdvantage, selectRows, type LossFunction, type Metrics, type Rng, type WorkerGroupBatch } from '@drmas/core';
import type { TrainedWorkerGroup } from './WorkerGroupsService.js';

/** Rows ordered by prompt + response length, so micro-batches and scoring chunks hold rows of similar length. */
function byLength(batch: WorkerGroupBatch, rows: readonly number[]): number[] {
  const length = (r: number) => batch.promptIds[r].length + batch.responseLengths[r];
  return [...rows].sort((a, b) => length(a) - length(b) || a - b);
}

interface ScoredRows {
  /** Log-probs of the scored rows, by row. */
  logProbs: Map<number, number[]>;
  /** Token-mean entropy of the policy over the scored rows' response tokens, when asked for. */
  entropy?: number;
}

/** Teacher-forced log-probs of `rows` at their sampling temperatures, scored in length order (little padding). */
async function scoreRows(
  engine: TrainedWorkerGroup['trainer'],
  batch: WorkerGroupBatch,
  rows: readonly number[],
  withEntropy = false,
): Promise<ScoredRows> {
  if (rows.length === 0) return { logProbs: new Map() };
  const L = batch.responseLength;
  const order = byLength(batch, rows);
  const scored = await engine.score({
    promptIds: order.map((r) => Array.from(batch.promptIds[r])),
    responseIds: order.map((r) => Array.from(batch.responseIds.subarray(r * L, r * L + batch.responseLengths[r]))),
    temperatures: batch.temperatures ? order.map((r) => batch.temperatures![r]) : undefined,
    withEntropy,
  });
  const logProbs = new Map(order.map((row, i) => [row, scored.logProbs[i]]));
  if (!withEntropy || !scored.entropy) return { logProbs };
  let sum = 0;
  let tokens = 0;
  for (const row of scored.entropy) for (const value of row) { sum += value; tokens++; }
  return { logProbs, entropy: tokens ? sum / tokens : 0 };
}

/** `[rows * responseLength]` log-probs: the scored rows', and `fill`'s for rows not scored. */
function flatten(scored: Map<number, number[]>, batch: WorkerGroupBatch, fill: Float32Array): Float32Array {
  const out = Float32Array.from(fill);
  for (const [row, values] of scored) out.set(values, row * batch.responseLength);
  return out;
}

/** Mean and max of |p_rollout - p_trainer| over the sampled tokens of `rows` (veRL's `rollout_probs_diff`). */
function probabilityGap(batch: WorkerGroupBatch, rows: readonly number[], old: Float32Array): { mean: number; max: number } {
  let sum = 0;
  let max = 0;
  let count = 0;
  for (const r of rows) {
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

/** Where the PPO ratio's denominator comes from (`trainer.oldLogProbs`). */
export type OldLogProbSource = 'recompute' | 'rollout';

/**
 * One worker group's share of a training step. Old log-probs: with `recompute` (veRL's default) the trainer scores
 * the rows before updating, which also gives the policy's entropy and the rollout engine's gap (`probs_diff`); with
 * `rollout` (veRL's bypass mode) the rollout engine's sampling log-probs serve, saving that forward pass, and the
 * entropy comes from the update's own forward pass. Then reference log-probs when the loss has a KL term, `epochs`
 * passes of `miniBatches` optimizer steps over shuffled rows (each mini-batch ordered by length, so its
 * micro-batches carry little padding; the loss is normalized by mini-batch totals, so order does not change it),
 * then weight sync to the rollout engine.
 */
export async function updateWorkerGroup(
  group: TrainedWorkerGroup,
  batch: WorkerGroupBatch,
  loss: LossFunction,
  rng: Rng,
  metrics: Metrics,
  oldLogProbs: OldLogProbSource = 'recompute',
): Promise<void> {
  if (batch.rows === 0) return;
  const prefix = `actor/${group.id}`;
  // An inert loss never reads the rows without advantage (the trainer skips them), so they are not scored.
  const rows = loss.zeroAdvantageRowsInert ? rowsWithAdvantage(batch) : Array.from({ length: batch.rows }, (_, r) => r);
  let old = batch.rolloutLogProbs;
  let entropy: number | undefined;
  if (oldLogProbs === 'recompute') {
    const scored = await scoreRows(group.trainer, batch, rows, true);
    old = flatten(scored.logProbs, batch, batch.rolloutLogProbs);
    entropy = scored.entropy;
    const gap = probabilityGap(batch, rows, old);
    metrics[`rollout/${group.id}/probs_diff_mean`] = gap.mean;
    metrics[`rollout/${group.id}/probs_diff_max`] = gap.max;
  }
  const prepared: WorkerGroupBatch = { ...batch, oldLogProbs: old };
  if (loss.needsReference && group.reference) {
    prepared.refLogProbs = flatten((await scoreRows(group.reference, batch, rows)).logProbs, batch, old);
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
          paramGroups: group.training.paramGroups,
        },
        entropyMetric: oldLogProbs === 'rollout',
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
  if (entropy !== undefined) metrics[`${prefix}/entropy`] = entropy;
  metrics[`${prefix}/grad_norm_max`] = maxGradNorm;
  metrics[`${prefix}/lr`] = lr;
  metrics[`${prefix}/skipped_steps`] = skipped;
  metrics[`${prefix}/updates`] = updates;
  if (group.rollout !== group.trainer) await group.rollout.syncWeights(group.trainer);
}
