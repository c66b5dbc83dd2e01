import * as tf from '@tensorflow/tfjs';
import type { DecoderModel } from '../model/DecoderModel.js';
import { promptResponseLayout, responseTokenStats, type ResponseTokenStats } from '../model/responseLogProbs.js';

export interface ScoreOptions {
  promptIds: ArrayLike<number>[];
  responseIds: ArrayLike<number>[];
  withEntropy?: boolean;
  /** Bound on rows * responseColumns * vocab per forward pass (memory of the log-softmax). */
  maxLogitsPerChunk?: number;
}

export interface ScoreOutput {
  logProbs: number[][];
  entropy?: number[][];
}

/** Teacher-forced log-prob (and entropy) of each response token after its prompt, in row chunks. */
export async function scoreTokens(model: DecoderModel, options: ScoreOptions): Promise<ScoreOutput> {
  const rows = options.promptIds.length;
  if (options.responseIds.length !== rows) {
    throw new RangeError(`scoring got ${rows} prompts but ${options.responseIds.length} responses`);
  }
  const logProbs: number[][] = [];
  const entropy: number[][] = [];
  const maxLogits = options.maxLogitsPerChunk ?? 1 << 24;
  let start = 0;
  while (start < rows) {
    let end = start + 1;
    const longest = (from: number, to: number) => Math.max(1, ...options.responseIds.slice(from, to).map((r) => r.length));
    while (end < rows && (end + 1 - start) * longest(start, end + 1) * model.config.vocabSize <= maxLogits) end++;
    const prompts = options.promptIds.slice(start, end);
    const responses = options.responseIds.slice(start, end);
    const layout = promptResponseLayout(prompts, responses);
    const stats = tf.tidy(
      () => responseTokenStats(model, layout, options.withEntropy ?? false) as unknown as tf.TensorContainer,
    ) as unknown as ResponseTokenStats;
    const lp = await stats.logProbs.data();
    const ent = stats.entropy ? await stats.entropy.data() : undefined;
    stats.logProbs.dispose();
    stats.entropy?.dispose();
    const r = layout.responseColumns;
    responses.forEach((response, i) => {
      logProbs.push(Array.from(lp.subarray(i * r, i * r + response.length)));
      if (ent) entropy.push(Array.from(ent.subarray(i * r, i * r + response.length)));
    });
    start = end;
  }
  return options.withEntropy ? { logProbs, entropy } : { logProbs };
}
