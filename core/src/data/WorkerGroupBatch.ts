import type { TurnKey } from './Turn.js';

/**
 * The columnar training batch of one worker group: every turn of that group's agents, response tokens padded to
 * `responseLength`. Flat arrays are row-major `[rows * responseLength]`.
 */
export interface WorkerGroupBatch {
  workerGroupId: string;
  /** The agents whose turns are in this batch. */
  agentIds: string[];
  rows: number;
  responseLength: number;
  keys: TurnKey[];
  /** Prompt ids per row, unpadded (backends pad as their kernels prefer). */
  promptIds: Int32Array[];
  /** Number of sampled response tokens of each row (the rest of the row is padding). */
  responseLengths: Int32Array;
  /** Response ids, right-padded with 0. */
  responseIds: Int32Array;
  /** 1 for response tokens that count in the loss, 0 for padding (and tool/observation tokens). */
  responseMask: Float32Array;
  advantages: Float32Array;
  returns?: Float32Array;
  /** Log-probs recomputed by the trainer before the update (the PPO "old" policy). */
  oldLogProbs?: Float32Array;
  /** Sampling temperature of each row (absent: all 1); scores and updates divide the row's logits by it. */
  temperatures?: Float32Array;
  /** Log-probs recorded by the rollout engine when sampling. */
  rolloutLogProbs: Float32Array;
  /** Log-probs of the frozen reference model, when a KL term is used. */
  refLogProbs?: Float32Array;
}
