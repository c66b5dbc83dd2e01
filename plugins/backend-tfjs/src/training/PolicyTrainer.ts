import * as tf from '@tensorflow/tfjs-core';
import {
  lossColumnsOf,
  lossTotalsInput,
  partMicroBatches,
  rowTrains,
  trainedColumns,
  type BatchView,
  type LossFunction,
  type LossInput,
  type LossTotals,
  type OptimizerSettings,
  type TrainingBatch,
  type UpdateRequest,
  type UpdateResult,
} from '@drmas/core';
import { promptResponseLayout } from '@drmas/models';
import type { DecoderModel } from '../model/DecoderModel.js';
import { responseTokenStats } from '../model/responseLogProbs.js';
import { AdamW } from './AdamW.js';
import { accumulatedStep } from './accumulatedStep.js';

/** The key under which a micro-batch's masked entropy sum travels (not a metric of its own). */
const ENTROPY_SUM = '\u0000entropy';
import { tfjsTensorOps } from './TfjsTensorOps.js';

/** An update request that breaks the trainer's contract: a bug of the plugin that built it, so a plain Error. */
export class TrainingInputError extends Error {
  constructor(key: string, message: string) {
    super(`${key}: ${message}`);
    this.name = 'TrainingInputError';
  }
}

/**
 * One model's optimizer and update step: micro-batches of the request's rows with gradient accumulation, clipping by
 * global norm (the norm reported is before clipping, like torch's clip_grad_norm_), AdamW; a non-finite norm, or one
 * the request's `acceptGradNorm` refuses, skips the step. The loss normalizes by the request's totals, which cover rows the caller left out.
 */
export class PolicyTrainer {
  readonly optimizer = new AdamW();
  /** The settings of the latest update, saved with the optimizer state. */
  settings: OptimizerSettings | undefined;

  constructor(private readonly model: DecoderModel) {}

  async update(request: UpdateRequest): Promise<UpdateResult> {
    const { loss, totals, optimizer: settings, lrScale } = request;
    this.settings = settings;
    const view = request.batch;
    validateView(view);
    const { batch } = view;
    const withEntropy = (loss.needsEntropy ?? false) || (request.entropyMetric ?? false);
    const agents = request.rowAgents;
    // A pairwise loss's micro-batches take whole preference pairs (consecutive rows).
    const budget = request.microBatchTokens ? { tokens: request.microBatchTokens, batch, unit: loss.pairedRows ? 2 : 1 } : undefined;
    const cut = partMicroBatches(view.rows, request.microBatchSize, agents?.codes, budget);
    const microBatches = cut.map((micro) => micro.rows);
    const split = loss.pairedRows ? microBatches.find((micro) => micro.length % 2 !== 0) : undefined;
    if (split) throw new TrainingInputError('microBatchSize', `a micro-batch of ${split.length} rows would split a preference pair`);
    const step = await accumulatedStep({
      weights: this.model.weights,
      microBatches,
      lossOf: (micro) => {
        const input = this.lossInput(batch, micro, totals, withEntropy, loss, request.oldLogProbs === 'current');
        const out = loss.compute(tfjsTensorOps, input);
        const sums: Record<string, tf.Tensor> = { ...out.metrics };
        if (request.entropyMetric && input.entropy) sums[ENTROPY_SUM] = tf.sum(tf.mul(input.entropy, input.responseMask));
        return { loss: out.loss as tf.Scalar, sums };
      },
      optimizer: this.optimizer,
      settings,
      lrScale,
      acceptGradNorm: request.acceptGradNorm,
      microBatchParts: agents && { parts: cut.map((micro) => micro.part), count: agents.agentCount },
      measureOnly: request.measureOnly,
    });
    const { [ENTROPY_SUM]: entropySum = 0, ...metrics } = step.sums;
    if (request.entropyMetric) {
      const tokens = trainedTokens(view);
      metrics['actor/entropy'] = tokens > 0 ? entropySum / tokens : 0;
    }
    metrics['actor/skipped_nonfinite'] = step.nonFinite ? 1 : 0;
    metrics['actor/micro_batches'] = cut.length;
    return {
      loss: step.lossSum,
      gradNorm: step.gradNorm,
      skipped: step.skipped,
      learningRate: settings.lr * lrScale,
      metrics,
      ...(step.partGradNorms && { agentGradNorms: step.partGradNorms }),
    };
  }

  /** Loss inputs of `rows`, response columns trimmed after the last trained token. */
  private lossInput(
    batch: TrainingBatch,
    rows: Int32Array,
    totals: LossTotals,
    withEntropy: boolean,
    loss: LossFunction,
    currentRatio: boolean,
  ): LossInput<tf.Tensor> {
    const R = batch.responseLength;
    const cut = trainedColumns(batch, rows);
    const { columns } = cut;
    const tensor = (values: Float32Array): tf.Tensor2D => tf.tensor2d(values, [rows.length, columns]);
    const take = (flat: ArrayLike<number>): tf.Tensor2D => tensor(cut.take(flat));
    const prompts = Array.from(rows, (r) => batch.promptIds[r]!);
    const responses = Array.from(rows, (r) => batch.responseIds.subarray(r * R, r * R + columns));
    const layout = promptResponseLayout(prompts, responses, columns);
    const stats = responseTokenStats(
      this.model,
      layout,
      withEntropy,
      true,
      Array.from(rows, (r) => batch.temperatures[r]!),
    );
    if (loss.needsReference && !batch.refLogProbs) {
      throw new TrainingInputError('batch.refLogProbs', 'the loss needs reference log-probs but the batch has none');
    }
    return {
      logProbs: stats.logProbs,
      oldLogProbs: currentRatio ? tfjsTensorOps.stopGradient(stats.logProbs) : take(batch.oldLogProbs ?? batch.rolloutLogProbs),
      ...Object.fromEntries(lossColumnsOf(loss).map((name) => [name, tensor(cut.column(name))])),
      responseMask: tensor(cut.responseMask()),
      refLogProbs: batch.refLogProbs ? take(batch.refLogProbs) : undefined,
      entropy: stats.entropy,
      totals: lossTotalsInput(tfjsTensorOps, totals),
    };
  }

  dispose(): void {
    this.optimizer.dispose();
  }
}

/** Trained tokens of the view's rows (the sum of their response mask). */
function trainedTokens(view: BatchView): number {
  const { responseLength: R, responseMask } = view.batch;
  let tokens = 0;
  for (const r of view.rows) if (rowTrains(view.batch, r)) for (let t = 0; t < R; t++) tokens += responseMask[r * R + t]!;
  return tokens;
}

function validateView(view: BatchView): void {
  const { batch } = view;
  for (const row of view.rows) {
    if (!Number.isInteger(row) || row < 0 || row >= batch.rows) {
      throw new TrainingInputError('batch.rows', `row ${row} is outside the batch's ${batch.rows} rows`);
    }
  }
}
