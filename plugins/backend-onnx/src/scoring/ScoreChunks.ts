import type { BatchView } from '@drmas/core';
import type { DecoderConfig } from '@drmas/models';
import { HEAD_VOCAB_CHUNK } from '../VocabChunkedHead.js';

/**
 * How large one scoring run may be, in float32 elements: its logits (rows x response columns x the head's width: the
 * vocabulary, or `HEAD_VOCAB_CHUNK` where the head goes over it in chunks) and one
 * layer's attention scores (rows x heads x width^2, width = the chunk's longest prompt plus its longest response).
 * 2^24 elements is 64 MiB; the graph holds a few such tensors at once.
 */
export const SCORE_CHUNK_LIMITS = Object.freeze({ logits: 1 << 24, attention: 1 << 24 });

/**
 * The view's rows in consecutive chunks `[start, end)` (indices into `view.rows`), each as long as both limits allow
 * and at least one row. Without the attention bound, a step of M-ASK's ~190 rows of up to ~600 tokens went in one
 * run (its logits are small: 40 response tokens x 512 ids), every row padded to the longest, and its attention
 * scores alone took 1.1 GiB a layer.
 */
export function scoreChunks(
  view: BatchView,
  config: Pick<DecoderConfig, 'vocabSize' | 'numHeads'>,
  limits: { logits: number; attention: number } = SCORE_CHUNK_LIMITS,
): Array<[start: number, end: number]> {
  const { promptIds, responseLengths } = view.batch;
  const headWidth = Math.min(config.vocabSize, HEAD_VOCAB_CHUNK);
  const chunks: Array<[number, number]> = [];
  let start = 0;
  while (start < view.rows.length) {
    let prompt = promptIds[view.rows[start]!]!.length;
    let response = Math.max(1, responseLengths[view.rows[start]!]!);
    let end = start + 1;
    for (; end < view.rows.length; end++) {
      const row = view.rows[end]!;
      const nextPrompt = Math.max(prompt, promptIds[row]!.length);
      const nextResponse = Math.max(response, responseLengths[row]!);
      const count = end + 1 - start;
      const width = nextPrompt + nextResponse;
      if (count * nextResponse * headWidth > limits.logits || count * config.numHeads * width * width > limits.attention) break;
      prompt = nextPrompt;
      response = nextResponse;
    }
    chunks.push([start, end]);
    start = end;
  }
  return chunks;
}
