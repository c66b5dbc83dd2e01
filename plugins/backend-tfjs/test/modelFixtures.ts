import * as tf from '@tensorflow/tfjs-core';
import { leftPad } from '@drmas/models';
import { DecoderModel } from '../src/model/DecoderModel.js';
import { randomWeights } from '../../../models/test/modelFixtures.js';

export { logSoftmax, tinyConfigJson } from '../../../models/test/modelFixtures.js';

/** A random decoder of `randomWeights` (every tensor random, so each feature visibly changes the logits) on tfjs. */
export function randomModel(configJson: Record<string, unknown>, seed = 1): DecoderModel {
  const { config, weights } = randomWeights(configJson, seed);
  return DecoderModel.fromTensors(config, weights);
}

/** Logits `[rows][position][vocab]` of each row, run as one left-padded batch. */
export function batchLogits(model: DecoderModel, rows: number[][]): number[][][] {
  const batch = leftPad(rows);
  const flat = tf.tidy(() => {
    const ids = tf.tensor2d(batch.ids, [batch.rows, batch.columns], 'int32');
    const { hidden } = model.forward({ inputIds: ids, positions: batch.positions, keyValid: batch.valid });
    return model.logits(hidden);
  });
  const data = flat.dataSync();
  flat.dispose();
  const v = model.config.vocabSize;
  return rows.map((row, r) =>
    row.map((_, j) => {
      const o = (r * batch.columns + batch.padding[r]! + j) * v;
      return Array.from(data.subarray(o, o + v));
    }),
  );
}

export function maxAbsDiff(a: number[][][], b: number[][][]): number {
  let m = 0;
  a.forEach((rows, i) => rows.forEach((row, j) => row.forEach((x, k) => (m = Math.max(m, Math.abs(x - b[i]![j]![k]!))))));
  return m;
}
