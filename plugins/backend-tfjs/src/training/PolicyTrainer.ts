import * as tf from '@tensorflow/tfjs-core';
import {
  trainedColumns,
  type BatchView,
  type LossInput,
  type OptimizerSettings,
  type TrainingBatch,
  type UpdateRequest,
  type UpdateResult,
} from '@drmas/core';
import { promptResponseLayout } from '@drmas/models';
import type { DecoderModel } from '../model/DecoderModel.js';
import { responseTokenStats } from '../model/responseLogProbs.js';
import { AdamW } from './AdamW.js';
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
    const rows = view.rows.length;
    const microBatchSize = Math.max(1, Math.floor(request.microBatchSize || rows));
    const variables = [...this.model.weights.values()];
    const names = [...this.model.weights.keys()];

    const accumulated = new Map<string, tf.Tensor>();
    let lossSum = 0;
    let entropySum = 0;
    const metricSums: Record<string, number> = {};
    const withEntropy = (loss.needsEntropy ?? false) || (request.entropyMetric ?? false);
    try {
      for (let start = 0; start < rows; start += microBatchSize) {
        const micro = view.rows.subarray(start, Math.min(rows, start + microBatchSize));
        if (loss.pairedRows && micro.length % 2 !== 0)
          throw new TrainingInputError('microBatchSize', `a micro-batch of ${micro.length} rows would split a preference pair`);
        const metricTensors: Record<string, tf.Tensor> = {};
        let entropyTensor: tf.Tensor | undefined;
        const { value, grads } = tf.variableGrads(() => {
          const input = this.lossInput(batch, micro, totals, withEntropy, loss.needsReference ?? false);
          const out = loss.compute(tfjsTensorOps, input);
          for (const [k, t] of Object.entries(out.metrics)) metricTensors[k] = tf.keep(t);
          if (request.entropyMetric && input.entropy) entropyTensor = tf.keep(tf.sum(tf.mul(input.entropy, input.responseMask)));
          return out.loss as tf.Scalar;
        }, variables);
        lossSum += (await value.data())[0]!;
        value.dispose();
        if (entropyTensor) {
          entropySum += (await entropyTensor.data())[0]!;
          entropyTensor.dispose();
        }
        for (const [k, t] of Object.entries(metricTensors)) {
          metricSums[k] = (metricSums[k] ?? 0) + (await t.data())[0]!;
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
      if (rows === 0) variables.forEach((v, i) => accumulated.set(names[i]!, tf.zerosLike(v)));
      if (request.entropyMetric) {
        const tokens = trainedTokens(view);
        metricSums['actor/entropy'] = tokens > 0 ? entropySum / tokens : 0;
      }

      const normTensor = tf.tidy(() => tf.sqrt(tf.addN([...accumulated.values()].map((g) => tf.sum(tf.square(g))))));
      const gradNorm = (await normTensor.data())[0]!;
      normTensor.dispose();
      const learningRate = settings.lr * lrScale;
      const metrics: Record<string, number> = { ...metricSums };
      if (!Number.isFinite(gradNorm)) {
        metrics['actor/skipped_nonfinite'] = 1;
        return { loss: lossSum, gradNorm, skipped: true, learningRate, metrics };
      }
      metrics['actor/skipped_nonfinite'] = 0;
      if (request.acceptGradNorm && !request.acceptGradNorm(gradNorm))
        return { loss: lossSum, gradNorm, skipped: true, learningRate, metrics };
      const maxNorm = settings.maxGradNorm;
      const clipCoef = maxNorm > 0 ? Math.min(1, maxNorm / (gradNorm + 1e-6)) : 1;
      if (clipCoef < 1) {
        for (const [name, g] of accumulated) {
          accumulated.set(name, tf.mul(g, clipCoef));
          g.dispose();
        }
      }
      this.optimizer.apply(this.model.weights, accumulated, settings, lrScale);
      return { loss: lossSum, gradNorm, skipped: false, learningRate, metrics };
    } finally {
      for (const g of accumulated.values()) g.dispose();
    }
  }

  /** Loss inputs of `rows`, response columns trimmed after the last trained token. */
  private lossInput(
    batch: TrainingBatch,
    rows: Int32Array,
    totals: LossInput<tf.Tensor>['totals'],
    withEntropy: boolean,
    withReference: boolean,
  ): LossInput<tf.Tensor> {
    const R = batch.responseLength;
    const { columns, take: copy } = trainedColumns(batch, rows);
    const take = (flat: ArrayLike<number>): tf.Tensor2D => tf.tensor2d(copy(flat), [rows.length, columns]);
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
    if (withReference && !batch.refLogProbs) {
      throw new TrainingInputError('batch.refLogProbs', 'the loss needs reference log-probs but the batch has none');
    }
    return {
      logProbs: stats.logProbs,
      oldLogProbs: take(batch.oldLogProbs ?? batch.rolloutLogProbs),
      advantages: take(batch.advantages),
      responseMask: take(batch.responseMask),
      refLogProbs: batch.refLogProbs ? take(batch.refLogProbs) : undefined,
      entropy: stats.entropy,
      totals,
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
  for (const r of view.rows) for (let t = 0; t < R; t++) tokens += responseMask[r * R + t]!;
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
