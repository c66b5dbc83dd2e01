import * as tf from '@tensorflow/tfjs-core';
import { scoringTemperature } from '@drmas/core';
import type { PromptResponseLayout } from '@drmas/models';
import type { DecoderModel } from './DecoderModel.js';

export interface ResponseTokenStats {
  /** `[rows, responseColumns]` log-prob of each response token under its row's temperature (default 1). */
  logProbs: tf.Tensor2D;
  /** `[rows, responseColumns]` entropy of the (tempered) predictive distribution at each response token. */
  entropy?: tf.Tensor2D;
}

/** `[rows * columns, 1]`: 1 / temperature of each row, repeated over its columns; undefined when all are 1. */
function inverseTemperatureColumn(temperatures: ArrayLike<number> | undefined, rows: number, columns: number): tf.Tensor2D | undefined {
  if (!temperatures) return undefined;
  if (temperatures.length !== rows) throw new RangeError(`got ${temperatures.length} temperatures for ${rows} rows`);
  let tempered = false;
  const scale = new Float32Array(rows * columns);
  for (let r = 0; r < rows; r++) {
    const t = scoringTemperature(temperatures[r]);
    if (t !== 1) tempered = true;
    scale.fill(1 / t, r * columns, (r + 1) * columns);
  }
  return tempered ? tf.tensor2d(scale, [rows * columns, 1]) : undefined;
}

/**
 * `[rows * responseColumns, hidden]`: the final hidden state at the position before each response token, the one that
 * predicts it (veRL's `[:, -response_length - 1 : -1]`); call inside `tf.tidy` or `tf.variableGrads`.
 */
export function predictingHidden(model: DecoderModel, layout: PromptResponseLayout, differentiable: boolean): tf.Tensor2D {
  const { rows, promptColumns: p, responseColumns: r } = layout;
  const width = p + r;
  const ids = tf.tensor2d(layout.ids, [rows, width], 'int32');
  const { hidden } = model.forward({ inputIds: ids, positions: layout.positions, keyValid: layout.valid, differentiable });
  const h = model.config.hiddenSize;
  return tf.reshape<tf.Rank.R2>(tf.slice(tf.reshape(hidden, [rows, width, h]), [0, p - 1, 0], [rows, r, h]), [rows * r, h]);
}

/**
 * Teacher-forced log-probs (and entropy) of the response tokens, each row's logits divided by its temperature;
 * call inside `tf.tidy` or, with `differentiable`, inside `tf.variableGrads`.
 */
export function responseTokenStats(
  model: DecoderModel,
  layout: PromptResponseLayout,
  withEntropy: boolean,
  differentiable = false,
  temperatures?: ArrayLike<number>,
): ResponseTokenStats {
  const { rows, responseColumns: r } = layout;
  const predicting = predictingHidden(model, layout, differentiable);
  const scale = inverseTemperatureColumn(temperatures, rows, r);
  const logits = model.logits(predicting);
  const logp = tf.logSoftmax(scale ? tf.mul(logits, scale) : logits);
  // int32 one-hot then cast: the wasm OneHot kernel writes int bits into a float32 output (tfjs 4.22).
  const oneHot = tf.cast(tf.oneHot(tf.tensor1d(layout.targets, 'int32'), model.config.vocabSize), 'float32');
  const logProbs = tf.reshape<tf.Rank.R2>(tf.sum(tf.mul(logp, oneHot), -1), [rows, r]);
  if (!withEntropy) return { logProbs };
  const entropy = tf.reshape<tf.Rank.R2>(tf.neg(tf.sum(tf.mul(tf.exp(logp), logp), -1)), [rows, r]);
  return { logProbs, entropy };
}
