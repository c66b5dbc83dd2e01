import * as tf from '@tensorflow/tfjs-core';
import type { BatchView, ScoreResult } from '@drmas/core';
import { promptResponseLayout } from '@drmas/models';
import type { DecoderModel } from '../model/DecoderModel.js';
import { responseTokenStats, type ResponseTokenStats } from '../model/responseLogProbs.js';

export interface ScoreLimits {
  /** Bound on rows * responseColumns * vocab per forward pass (memory of the log-softmax). */
  maxLogitsPerChunk?: number;
  /**
   * Bound on rows * (prompt + response columns) per forward pass: the wasm heap aborts on passes much larger than
   * about 10k tokens of the tiny model.
   */
  maxTokensPerChunk?: number;
}

/**
 * Teacher-forced log-prob (and entropy) of each response token of the view's rows after their prompts, each at its
 * row's temperature, in row chunks; `[rows * batch.responseLength]` in the view's order.
 */
export async function scoreTokens(
  model: DecoderModel,
  view: BatchView,
  withEntropy = false,
  limits: ScoreLimits = {},
): Promise<ScoreResult> {
  const { batch } = view;
  const R = batch.responseLength;
  const rows = view.rows.length;
  const logProbs = new Float32Array(rows * R);
  const entropy = withEntropy ? new Float32Array(rows * R) : undefined;
  const maxLogits = limits.maxLogitsPerChunk ?? 1 << 24;
  const maxTokens = limits.maxTokensPerChunk ?? 8192;
  const responseLength = (i: number) => batch.responseLengths[view.rows[i]!]!;
  const promptLength = (i: number) => batch.promptIds[view.rows[i]!]!.length;
  const longest = (length: (i: number) => number, from: number, to: number) => {
    let max = 1;
    for (let i = from; i < to; i++) max = Math.max(max, length(i));
    return max;
  };
  const fits = (from: number, to: number) => {
    const responseColumns = longest(responseLength, from, to);
    return (
      (to - from) * responseColumns * model.config.vocabSize <= maxLogits &&
      (to - from) * (responseColumns + longest(promptLength, from, to)) <= maxTokens
    );
  };
  let start = 0;
  while (start < rows) {
    let end = start + 1;
    while (end < rows && fits(start, end + 1)) end++;
    const chunk = view.rows.subarray(start, end);
    const prompts = Array.from(chunk, (r) => batch.promptIds[r]!);
    const responses = Array.from(chunk, (r) => batch.responseIds.subarray(r * R, r * R + batch.responseLengths[r]!));
    const layout = promptResponseLayout(prompts, responses);
    const temperatures = Array.from(chunk, (r) => batch.temperatures[r]!);
    const stats = tf.tidy(
      () => responseTokenStats(model, layout, withEntropy, false, temperatures) as unknown as tf.TensorContainer,
    ) as unknown as ResponseTokenStats;
    const lp = await stats.logProbs.data();
    const ent = stats.entropy ? await stats.entropy.data() : undefined;
    stats.logProbs.dispose();
    stats.entropy?.dispose();
    const r = layout.responseColumns;
    responses.forEach((response, i) => {
      const at = (start + i) * R;
      logProbs.set(lp.subarray(i * r, i * r + response.length), at);
      if (ent && entropy) entropy.set(ent.subarray(i * r, i * r + response.length), at);
    });
    start = end;
  }
  return entropy ? { logProbs, entropy } : { logProbs };
}
