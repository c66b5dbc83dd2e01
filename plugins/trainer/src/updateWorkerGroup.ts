import { performance } from 'node:perf_hooks';
import {
  longestResponse,
  lossTotals,
  rowsWithAdvantage,
  selectRows,
  type BatchView,
  type Distributions,
  type LossFunction,
  type Metrics,
  type PolicyBackend,
  type Rng,
  type WorkerGroupBatch,
} from '@drmas/core';
import { AgentGradNorms, agentsOf, measureInflation } from './agentDiagnostics/agentGradients.js';
import type { AgentRewardDiagnosis } from './agentDiagnostics/agentRewardStatistics.js';
import { describeSpike, watchStep, type GradNormSpikeGuard } from './spikeGuard/GradNormSpikeGuard.js';
import type { TrainedWorkerGroup } from './WorkerGroupsService.js';

/** The view's rows ordered by prompt + response length, so micro-batches and scoring chunks hold rows of similar length. */
export function byLength(view: BatchView): BatchView {
  const { promptIds, responseLengths } = view.batch;
  const length = (r: number) => promptIds[r]!.length + responseLengths[r]!;
  return { batch: view.batch, rows: Int32Array.from(view.rows).sort((a, b) => length(a) - length(b) || a - b) };
}

/** The rows of `view` that are also in `kept`, in `view`'s order. */
function restrict(view: BatchView, kept: ReadonlySet<number>): BatchView {
  return { batch: view.batch, rows: view.rows.filter((row) => kept.has(row)) };
}

/**
 * Teacher-forced log-probs of the view's rows (scored in length order, so chunks carry little padding) written into
 * `column` at those rows; returns the token-mean entropy over them when asked for.
 */
export async function scoreInto(
  engine: PolicyBackend,
  view: BatchView,
  column: Float32Array,
  withEntropy: boolean,
): Promise<number | undefined> {
  if (view.rows.length === 0) return undefined;
  const ordered = byLength(view);
  const { responseLength: R, responseLengths } = view.batch;
  const scored = await engine.score({ batch: ordered, withEntropy });
  let sum = 0;
  let tokens = 0;
  ordered.rows.forEach((row, i) => {
    const length = responseLengths[row]!;
    column.set(scored.logProbs.subarray(i * R, i * R + length), row * R);
    if (!scored.entropy) return;
    for (let t = 0; t < length; t++) sum += scored.entropy[i * R + t]!;
    tokens += length;
  });
  return withEntropy && scored.entropy ? (tokens ? sum / tokens : 0) : undefined;
}

/** Mean and max of |p_rollout - p_trainer| over the sampled tokens of the view's rows (veRL's `rollout_probs_diff`). */
function probabilityGap(view: BatchView, old: Float32Array): { mean: number; max: number } {
  const { responseLength: R, responseLengths, rolloutLogProbs } = view.batch;
  let sum = 0;
  let max = 0;
  let count = 0;
  for (const row of view.rows) {
    for (let t = 0; t < responseLengths[row]!; t++) {
      const i = row * R + t;
      const gap = Math.abs(Math.exp(rolloutLogProbs[i]!) - Math.exp(old[i]!));
      sum += gap;
      max = Math.max(max, gap);
      count++;
    }
  }
  return { mean: count ? sum / count : 0, max };
}

/**
 * One epoch's mini-batches of `view`: its rows shuffled by `rng` (drawn when the first is taken), cut into `count`
 * parts, each ordered by length so its micro-batches carry little padding.
 */
export function* miniBatchViews(view: BatchView, rng: Rng, count: number, paired = false): Generator<BatchView> {
  // What mini-batches are cut from: rows, or pairs (rows 2p and 2p + 1 of the view), kept in their order.
  const units = paired ? view.rows.length / 2 : view.rows.length;
  const order = rng.shuffle(Array.from({ length: units }, (_, i) => i));
  const size = Math.ceil(units / Math.min(count, units));
  for (let start = 0; start < units; start += size) {
    const picked = order.slice(start, start + size);
    yield paired
      ? selectRows(
          view,
          picked.flatMap((p) => [2 * p, 2 * p + 1]),
        )
      : byLength(selectRows(view, picked));
  }
}

/** Where the PPO ratio's denominator comes from (`trainer.oldLogProbs`, `auto` resolved by `oldLogProbSource`). */
export type OldLogProbSource = 'recompute' | 'rollout' | 'current';

/**
 * `trainer.oldLogProbs` for a group: `auto` is `current` where the update's own log-probs are those the batch was
 * sampled with (one optimizer step per batch, sampled by the trainer's own engine: a recomputed ratio would be 1 up to
 * rounding, at the cost of a forward pass), else `recompute` (which also measures a separate rollout engine's gap,
 * `probs_diff`).
 */
export function oldLogProbSource(
  setting: OldLogProbSource | 'auto',
  group: { optimizerSteps: number; samplesOnTrainer: boolean },
): OldLogProbSource {
  if (setting !== 'auto') return setting;
  return group.optimizerSteps === 1 && group.samplesOnTrainer ? 'current' : 'recompute';
}

export interface WorkerGroupUpdate {
  loss: LossFunction;
  /** Shuffles the rows into mini-batches. */
  rng: Rng;
  metrics: Metrics;
  /** Receives `actor/<id>/grad_norm`: the pre-clip norm of every optimizer step, for histograms. */
  distributions?: Distributions;
  /** The learning-rate schedule's factor at this step. */
  lrScale: number;
  oldLogProbs?: OldLogProbSource;
  /**
   * The caller has already scored `batch.oldLogProbs` at the view's rows (HAPPO scores every role's rows before its
   * first sub-step, so a role later on a shared model keeps the sampling weights as its PPO denominator).
   */
  oldLogProbsScored?: boolean;
  /** The id in the update's metric names (`actor/<id>/...`); default the group's (HAPPO: `<group>/<role>` on a shared model). */
  metricsId?: string;
  /** The group's gradient-norm spike guard, with the run log and the training step its lines name. */
  spikeGuard?: { guard: GradNormSpikeGuard; log: (message: string) => void; step: number };
  /**
   * `trainer.agentDiagnostics`: the batch's per-agent reward statistics. Each optimizer step then also reports each
   * agent's share of the gradient (`agent/<role>/grad_norm`), and before the first one the inflation is measured.
   */
  agentDiagnosis?: AgentRewardDiagnosis;
  /** With `agentDiagnosis`: measure the inflation at this step (default true; `agentDiagnostics.inflationEvery`). */
  measureInflation?: boolean;
}

/**
 * One worker group's share of a training step, on a view of the step's batch. Rows whose advantages are all zero are
 * selected once: an inert loss (`zeroAdvantageRowsInert`) learns nothing from them, so they are neither scored nor
 * computed, while the loss still normalizes by the whole mini-batch. Old log-probs: with `recompute` (veRL's default)
 * the trainer scores the rows into `batch.oldLogProbs` first, which also gives the policy's entropy and the rollout
 * engine's gap (`probs_diff`); with `rollout` (veRL's bypass mode) the sampling log-probs serve, with `current` the
 * update's own forward pass, detached (a ratio of exactly 1), and either way the entropy comes from that pass. Then reference log-probs when the loss has a KL term, `epochs` passes of
 * `miniBatches` optimizer steps over shuffled rows (each mini-batch ordered by length, so its micro-batches carry
 * little padding), then weight sync to the rollout engine. With a spike guard, each optimizer step's pre-clip
 * gradient norm is judged against the window of earlier ones: a spike is logged and counted, and with `skip` the
 * engine drops that step (`acceptGradNorm`), with `rollback` the group returns to its state from before this
 * training step's update (an in-memory snapshot taken first) and the rest of the update is dropped. A pairwise loss
 * (`pairedRows`, DPO) gets a preference batch's view: mini-batches and micro-batches of whole pairs, no old log-probs.
 */
export async function updateWorkerGroup(group: TrainedWorkerGroup, view: WorkerGroupBatch, options: WorkerGroupUpdate): Promise<void> {
  const n = view.rows.length;
  if (n === 0) return;
  const { loss, rng, metrics, lrScale } = options;
  const source = options.oldLogProbs ?? 'recompute';
  const batch = view.batch;
  const prefix = `actor/${options.metricsId ?? group.id}`;
  // A pairwise loss (DPO) trains on a preference batch of whole pairs: no row is inert, and it reads no old log-probs.
  const paired = loss.pairedRows === true;
  const learning = loss.zeroAdvantageRowsInert ? rowsWithAdvantage(view) : view;
  const timed = phaseTimer(metrics, `timing/update/${options.metricsId ?? group.id}`);
  const ratio = source === 'current' && !paired ? 'current' : 'batch';
  let entropy: number | undefined;
  if (source === 'recompute' && !paired && !options.oldLogProbsScored) {
    batch.oldLogProbs ??= Float32Array.from(batch.rolloutLogProbs);
    entropy = await timed('old_log_probs', () => scoreInto(group.trainer, learning, batch.oldLogProbs!, true));
    const gap = probabilityGap(learning, batch.oldLogProbs);
    metrics[`rollout/${group.id}/probs_diff_mean`] = gap.mean;
    metrics[`rollout/${group.id}/probs_diff_max`] = gap.max;
  }
  // The reference: the frozen initial model, or with `referencePolicy: current` the trainer before this update.
  const reference = group.reference ?? (loss.referencePolicy === 'current' ? group.trainer : undefined);
  if (loss.needsReference && reference) {
    batch.refLogProbs ??= Float32Array.from(batch.oldLogProbs ?? batch.rolloutLogProbs);
    await timed('ref_log_probs', () => scoreInto(reference, learning, batch.refLogProbs!, false));
  }
  const { miniBatches, epochs, optimizer } = group.training;
  // Micro-batches hold whole pairs: an odd size is rounded up.
  const microBatchSize = paired ? group.training.microBatchSize + (group.training.microBatchSize % 2) : group.training.microBatchSize;
  const learningRows = new Set(learning.rows);
  const responseLength = longestResponse(view);
  // A preference pair may span two agents, and splitting micro-batches by agent would split it: no per-agent view of a pairwise loss.
  const diagnosis = paired ? undefined : options.agentDiagnosis;
  const agentNorms = diagnosis && new AgentGradNorms(agentsOf(view));
  if (diagnosis && options.measureInflation !== false)
    await timed('inflation', () =>
      measureInflation(group.trainer, view, diagnosis, { loss, microBatchSize, optimizer, responseLength, oldLogProbs: ratio }, metrics),
    );
  const agentIds = batch.ids.agent;
  const rowAgents = agentNorms && { codes: agentIds.codes, agentCount: agentIds.names.length };
  const sums: Record<string, number> = {};
  const add = (key: string, value: number) => {
    sums[key] = (sums[key] ?? 0) + value;
  };
  const gradNorms: number[] = [];
  let updates = 0;
  let maxGradNorm = 0;
  let skipped = 0;
  let lr = 0;
  const guarded = options.spikeGuard;
  const action = guarded?.guard.settings.action;
  // Rollback's "last good" state: the group's weights and optimizer as its previous training step left them.
  const lastGood = action === 'rollback' ? await group.trainer.snapshotTraining!() : undefined;
  let spikes = 0;
  let rolledBack = false;
  const optimizerStarted = performance.now();
  for (let epoch = 0; epoch < epochs && !rolledBack; epoch++) {
    for (const miniBatch of miniBatchViews(view, rng, miniBatches, paired)) {
      if (rolledBack) break;
      const computed = learning === view ? miniBatch : restrict(miniBatch, learningRows);
      const watch = watchStep(guarded?.guard);
      const result = await group.trainer.update({
        batch: computed,
        totals: lossTotals(miniBatch, { responseLength, microBatchSize }),
        loss,
        microBatchSize,
        microBatchTokens: group.training.microBatchTokens,
        optimizer,
        lrScale,
        entropyMetric: source !== 'recompute',
        oldLogProbs: ratio,
        acceptGradNorm: watch.acceptGradNorm,
        rowAgents,
      });
      agentNorms?.add(result.agentGradNorms);
      updates++;
      const judged = watch.settle(result.gradNorm);
      if (judged?.spike) {
        spikes++;
        guarded!.log(describeSpike(`worker group ${group.id}`, guarded!.step, updates, result.gradNorm, judged, action!));
        if (action === 'rollback') {
          await group.trainer.restoreTraining!(lastGood!);
          rolledBack = true;
        }
      }
      lr = result.learningRate;
      if (result.skipped) skipped++;
      if (Number.isFinite(result.gradNorm)) maxGradNorm = Math.max(maxGradNorm, result.gradNorm);
      add('loss', result.loss);
      add('grad_norm', result.gradNorm);
      gradNorms.push(result.gradNorm);
      for (const [key, value] of Object.entries(result.metrics)) add(key, value);
      add('zero_adv_rows_skipped', (miniBatch.rows.length - computed.rows.length) / miniBatch.rows.length);
    }
  }
  timed.record('optimizer_steps', optimizerStarted);
  // A backend's `actor/<name>` (e.g. the entropy of its own forward pass) wins over the loss's `<name>`.
  for (const [key, value] of Object.entries(sums)) metrics[`${prefix}/${key.replace(/^actor\//, '')}`] = value / updates;
  if (entropy !== undefined) metrics[`${prefix}/entropy`] = entropy;
  metrics[`${prefix}/grad_norm_max`] = maxGradNorm;
  metrics[`${prefix}/lr`] = lr;
  metrics[`${prefix}/skipped_steps`] = skipped;
  metrics[`${prefix}/updates`] = updates;
  if (guarded) metrics[`${prefix}/spikes`] = spikes;
  if (options.distributions) options.distributions[`${prefix}/grad_norm`] = gradNorms;
  agentNorms?.record(agentIds.names, metrics, options.distributions);
  if (group.rollout !== group.trainer) await timed('weight_sync', () => group.rollout.syncWeights(group.trainer));
}

/**
 * Times the phases of a worker group's update into `<prefix>/<phase>` (seconds, as the kernel's `timing/<hook>`):
 * veRL's `timing_s/old_log_prob`, `ref` and `update_actor`, split by group.
 */
function phaseTimer(metrics: Metrics, prefix: string) {
  const record = (phase: string, started: number) => {
    metrics[`${prefix}/${phase}`] = Math.round(performance.now() - started) / 1000;
  };
  const timed = async <T>(phase: string, work: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await work();
    } finally {
      record(phase, started);
    }
  };
  return Object.assign(timed, { record });
}
