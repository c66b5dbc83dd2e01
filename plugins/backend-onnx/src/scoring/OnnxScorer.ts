import type { ScoreRequest, ScoreResult } from '@drmas/core';
import { promptResponseLayout } from '@drmas/models';
import { GraphNames } from '../DecoderGraph.js';
import { scoreFeeds } from '../DecoderFeeds.js';
import type { DecoderSessions } from '../DecoderSessions.js';
import type { WeightState } from '../weights/WeightState.js';
import { scoreChunks } from './ScoreChunks.js';

/** The onnx scorer: `score` on the score graph, teacher-forced, in row chunks. */
export class OnnxScorer {
  constructor(
    private readonly state: WeightState,
    private readonly sessions: DecoderSessions,
  ) {}

  /**
   * Teacher-forced log-probs (and entropy) of each response token of the view's rows, each at its row's temperature,
   * in row chunks of bounded logits and attention size (`scoreChunks`).
   */
  async score(request: ScoreRequest): Promise<ScoreResult> {
    const { batch, rows: viewRows } = request.batch;
    const R = batch.responseLength;
    const rows = viewRows.length;
    const logProbs = new Float32Array(rows * R);
    const entropy = request.withEntropy ? new Float32Array(rows * R) : undefined;
    for (const [start, end] of scoreChunks(request.batch, this.state.config)) {
      const chunk = viewRows.subarray(start, end);
      const responses = Array.from(chunk, (r) => batch.responseIds.subarray(r * R, r * R + batch.responseLengths[r]!));
      const layout = promptResponseLayout(
        Array.from(chunk, (r) => batch.promptIds[r]!),
        responses,
      );
      const r = layout.responseColumns;
      const feeds = scoreFeeds(
        this.sessions.ort,
        this.state.config,
        this.state.invFreq,
        layout,
        Array.from(chunk, (row) => batch.temperatures[row]),
      );
      const out = await this.sessions.run('score', feeds);
      const lp = out[GraphNames.logProbs]!.data as Float32Array;
      const ent = out[GraphNames.entropy]!.data as Float32Array;
      responses.forEach((response, i) => {
        const at = (start + i) * R;
        logProbs.set(lp.subarray(i * r, i * r + response.length), at);
        entropy?.set(ent.subarray(i * r, i * r + response.length), at);
      });
    }
    return entropy ? { logProbs, entropy } : { logProbs };
  }
}
