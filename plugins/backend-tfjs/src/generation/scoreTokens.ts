import * as tf from '@tensorflow/tfjs';
import { promptResponseLayout } from '@drmas/models';
import type { DecoderModel } from '../model/DecoderModel.js';
import { responseTokenStats, type ResponseTokenStats } from '../model/responseLogProbs.js';

export interface ScoreOptions {
  promptIds: ArrayLike<number>[];
  responseIds: ArrayLike<number>[];
  withEntropy?: boolean;
  /** Temperature of each row (default 1). */
  temperatures?: ArrayLike<number>;
  /** Bound on rows * responseColumns * vocab per forward pass (memory of the log-softmax). */
  maxLogitsPerChunk?: number;
  /**
   * Bound on rows * (prompt + response columns) per forward pass: the wasm heap aborts on passes much larger than
   * about 10k tokens of the tiny model.
   */
  maxTokensPerChunk?: number;
}

export interface ScoreOutput {
  logProbs: number[][];
  entropy?: number[][];
}

function rowSlice(values: ArrayLike<number> | undefined, start: number, end: number): number[] | undefined {
  return values ? Array.from({ length: end - start }, (_, i) => values[start + i]) : undefined;
}

/** Teacher-forced log-prob (and entropy) of each response token after its prompt, in row chunks. */
export async function scoreTokens(model: DecoderModel, options: ScoreOptions): Promise<ScoreOutput> {
  const rows = options.promptIds.length;
  if (options.responseIds.length !== rows) {
    throw new RangeError(`scoring got ${rows} prompts but ${options.responseIds.length} responses`);
  }
  if (options.temperatures && options.temperatures.length !== rows) {
    throw new RangeError(`scoring got ${rows} prompts but ${options.temperatures.length} temperatures`);
  }
  const logProbs: number[][] = [];
  const entropy: number[][] = [];
  const maxLogits = options.maxLogitsPerChunk ?? 1 << 24;
  const maxTokens = options.maxTokensPerChunk ?? 8192;
  const longest = (ids: ArrayLike<number>[], from: number, to: number) => {
    let max = 1;
    for (let i = from; i < to; i++) max = Math.max(max, ids[i].length);
    return max;
  };
  const fits = (from: number, to: number) => {
    const responseColumns = longest(options.responseIds, from, to);
    return (to - from) * responseColumns * model.config.vocabSize <= maxLogits
      && (to - from) * (responseColumns + longest(options.promptIds, from, to)) <= maxTokens;
  };
  let start = 0;
  while (start < rows) {
    let end = start + 1;
    while (end < rows && fits(start, end + 1)) end++;
    const prompts = options.promptIds.slice(start, end);
    const responses = options.responseIds.slice(start, end);
    const layout = promptResponseLayout(prompts, responses);
    const stats = tf.tidy(
      () => responseTokenStats(model, layout, options.withEntropy ?? false, false, rowSlice(options.temperatures, start, end)) as unknown as tf.TensorContainer,
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
