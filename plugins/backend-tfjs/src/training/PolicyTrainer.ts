import * as tf from '@tensorflow/tfjs';
import { rowsWithAdvantage, selectRows, type LossInput, type OptimizerSettings, type UpdateRequest, type UpdateResult, type WorkerGroupBatch } from '@drmas/core';
import { promptResponseLayout } from '@drmas/models';
import type { DecoderModel } from '../model/DecoderModel.js';
import { responseTokenStats } from '../model/responseLogProbs.js';
import { AdamW, DEFAULT_OPTIMIZER_SETTINGS } from './AdamW.js';
import { learningRateAt } from './learningRateSchedule.js';
import { tfjsTensorOps } from './TfjsTensorOps.js';

export class TrainingInputError extends Error {
  constructor(key: string, message: string) {
    super(`${key}: ${message}`);
    this.name = 'TrainingInputError';
  }
}

/**
 * One model's optimizer and update step: micro-batches with gradient accumulation, clipping by global norm
 * (the norm reported is before clipping, like torch's clip_grad_norm_), AdamW; a non-finite norm skips the step.
 */
export class PolicyTrainer {
  readonly optimizer = new AdamW();
  settings: OptimizerSettings;

  constructor(
    private readonly model: DecoderModel,
    settings: Partial<OptimizerSettings> = {},
  ) {
    this.settings = { ...DEFAULT_OPTIMIZER_SETTINGS, ...settings };
  }

  async update(request: UpdateRequest): Promise<UpdateResult> {
    const settings: OptimizerSettings = { ...this.settings, ...request.optimizer };
    const { loss } = request;
    validateBatch(request.batch);
    const microBatchSize = Math.max(1, Math.floor(request.microBatchSize || request.batch.rows));
    const totals = { ...responseTotals(request.batch), microBatches: Math.max(1, Math.ceil(request.batch.rows / microBatchSize)) };
    // Rows whose advantages are all zero add nothing to an inert loss; the totals above still count them.
    const trained = loss.zeroAdvantageRowsInert ? rowsWithAdvantage(request.batch) : undefined;
    const batch = trained && trained.length < request.batch.rows ? selectRows(request.batch, trained) : request.batch;
    const variables = [...this.model.weights.values()];
    const names = [...this.model.weights.keys()];

    const accumulated = new Map<string, tf.Tensor>();
    let lossSum = 0;
    let entropySum = 0;
    const metricSums: Record<string, number> = {};
    const withEntropy = (loss.needsEntropy ?? false) || (request.entropyMetric ?? false);
    try {
      for (let start = 0; start < batch.rows; start += microBatchSize) {
        const end = Math.min(batch.rows, start + microBatchSize);
        const metricTensors: Record<string, tf.Tensor> = {};
        let entropyTensor: tf.Tensor | undefined;
        const { value, grads } = tf.variableGrads(() => {
          const input = this.lossInput(batch, start, end, totals, withEntropy, loss.needsReference ?? false);
          const out = loss.compute(tfjsTensorOps, input);
          for (const [k, t] of Object.entries(out.metrics)) metricTensors[k] = tf.keep(t);
          if (request.entropyMetric && input.entropy) entropyTensor = tf.keep(tf.sum(tf.mul(input.entropy, input.responseMask)));
          return out.loss as tf.Scalar;
        }, variables);
        lossSum += (await value.data())[0];
        value.dispose();
        if (entropyTensor) {
          entropySum += (await entropyTensor.data())[0];
          entropyTensor.dispose();
        }
        for (const [k, t] of Object.entries(metricTensors)) {
          metricSums[k] = (metricSums[k] ?? 0) + (await t.data())[0];
          t.dispose();
        }
        variables.forEach((v, i) => {
          const g = grads[v.name];
          if (!g) return;
          const previous = accumulated.get(names[i]);
          if (previous) {
            accumulated.set(names[i], tf.add(previous, g));
            previous.dispose();
            g.dispose();
          } else {
            accumulated.set(names[i], g);
          }
        });
      }
      if (batch.rows === 0) variables.forEach((v, i) => accumulated.set(names[i], tf.zerosLike(v)));
      metricSums['actor/zero_adv_rows_skipped'] = (request.batch.rows - batch.rows) / Math.max(request.batch.rows, 1);
      if (request.entropyMetric) {
        const tokens = responseTotals(batch).tokens;
        metricSums['actor/entropy'] = tokens > 0 ? entropySum / tokens : 0;
      }

      const normTensor = tf.tidy(() => tf.sqrt(tf.addN([...accumulated.values()].map((g) => tf.sum(tf.square(g))))));
      const gradNorm = (await normTensor.data())[0];
      normTensor.dispose();
      const learningRate = learningRateAt(settings, this.optimizer.step);
      const metrics: Record<string, number> = { ...metricSums, 'actor/grad_norm': gradNorm, 'actor/lr': learningRate };
      if (!Number.isFinite(gradNorm)) {
        metrics['actor/skipped_nonfinite'] = 1;
        return { loss: lossSum, gradNorm, skipped: true, learningRate, metrics };
      }
      metrics['actor/skipped_nonfinite'] = 0;
      const maxNorm = settings.maxGradNorm;
      const clipCoef = maxNorm !== undefined && maxNorm > 0 ? Math.min(1, maxNorm / (gradNorm + 1e-6)) : 1;
      if (clipCoef < 1) {
        for (const [name, g] of accumulated) {
          accumulated.set(name, tf.mul(g, clipCoef));
          g.dispose();
        }
      }
      this.optimizer.apply(this.model.weights, accumulated, learningRate, settings);
      return { loss: lossSum, gradNorm, skipped: false, learningRate, metrics };
    } finally {
      for (const g of accumulated.values()) g.dispose();
    }
  }

  /** Loss inputs of rows [start, end), response columns trimmed after the last counted token. */
  private lossInput(
    batch: WorkerGroupBatch,
    start: number,
    end: number,
    totals: LossInput<tf.Tensor>['totals'],
    withEntropy: boolean,
    withReference: boolean,
  ): LossInput<tf.Tensor> {
    const R = batch.responseLength;
    let columns = 1;
    for (let r = start; r < end; r++) {
      for (let j = R - 1; j >= columns; j--) {
        if (batch.responseMask[r * R + j] !== 0) {
          columns = j + 1;
          break;
        }
      }
    }
    const rows = end - start;
    const take = (flat: ArrayLike<number>): tf.Tensor2D => {
      const out = new Float32Array(rows * columns);
      for (let r = 0; r < rows; r++) for (let j = 0; j < columns; j++) out[r * columns + j] = flat[(start + r) * R + j];
      return tf.tensor2d(out, [rows, columns]);
    };
    const responses = Array.from({ length: rows }, (_, r) => batch.responseIds.subarray((start + r) * R, (start + r) * R + columns));
    const layout = promptResponseLayout(batch.promptIds.slice(start, end), responses, columns);
    const stats = responseTokenStats(this.model, layout, withEntropy, true, batch.temperatures?.subarray(start, end));
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

/** Response tokens and rows with at least one token; rows with none do not count, as in aggregateLoss's seq-mean modes. */
function responseTotals(batch: WorkerGroupBatch): { tokens: number; rows: number; responseLength: number } {
  let tokens = 0;
  let rows = 0;
  for (let r = 0; r < batch.rows; r++) {
    let rowTokens = 0;
    for (let t = 0; t < batch.responseLength; t++) rowTokens += batch.responseMask[r * batch.responseLength + t];
    tokens += rowTokens;
    if (rowTokens > 0) rows++;
  }
  return { tokens, rows, responseLength: batch.responseLength };
}

function validateBatch(batch: WorkerGroupBatch): void {
  const n = batch.rows * batch.responseLength;
  for (const key of ['responseIds', 'responseMask', 'advantages', 'rolloutLogProbs'] as const) {
    if (batch[key].length !== n) {
      throw new TrainingInputError(`batch.${key}`, `has ${batch[key].length} values, expected rows x responseLength = ${n}`);
    }
  }
  if (batch.promptIds.length !== batch.rows) {
    throw new TrainingInputError('batch.promptIds', `has ${batch.promptIds.length} rows, expected ${batch.rows}`);
  }
}
