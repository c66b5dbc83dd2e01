import {
  longestResponse,
  lossColumn,
  lossTotals,
  makeTurn,
  TrainingBatch,
  type BatchView,
  type LossFunction,
  type LossInput,
  type OptimizerSettings,
  type TensorOps,
  type UpdateRequest,
  type WorkerGroupBatch,
} from '@drmas/core';

/** Token-mean cross-entropy of the response tokens (advantage-weighted): `-sum(A * logp * mask) / tokens`. */
export const weightedCrossEntropy: LossFunction = {
  compute<T>(ops: TensorOps<T>, input: LossInput<T>) {
    const weighted = ops.mul(ops.mul(input.logProbs, lossColumn(input, 'advantages')), input.responseMask);
    const loss = ops.div(ops.neg(ops.sum(weighted)), input.totals.tokens);
    const tokenLogProb = ops.div(ops.sum(ops.mul(input.logProbs, input.responseMask)), input.totals.tokens);
    return { loss, metrics: { 'actor/mean_logprob': tokenLogProb } };
  },
};

/** A worker group's view of `rows` (prompt, response) pairs with unit advantages (or the given ones per row). */
export function makeBatch(pairs: [number[], number[]][], advantages?: readonly number[]): WorkerGroupBatch {
  const batch = TrainingBatch.fromSequences(
    pairs.map(([p]) => p),
    pairs.map(([, r]) => r),
    { workerGroup: 'test' },
  );
  const R = batch.responseLength;
  pairs.forEach(([, response], r) =>
    response.forEach((_, j) => {
      batch.advantages[r * R + j] = advantages?.[r] ?? 1;
    }),
  );
  return batch.workerGroups()[0]!;
}

/** AdamW settings as torch's defaults, lr aside. */
export const OPTIMIZER: OptimizerSettings = {
  lr: 1e-6,
  betas: [0.9, 0.999],
  eps: 1e-8,
  weightDecay: 0.01,
  maxGradNorm: 1,
  paramGroups: [],
};

/** An update of `view`'s rows; the loss normalizes by `normalizeBy`'s totals (default: the view's own). */
export function updateRequest(
  view: BatchView,
  loss: LossFunction,
  microBatchSize: number,
  options: { optimizer?: Partial<OptimizerSettings>; lrScale?: number; entropyMetric?: boolean; normalizeBy?: BatchView } = {},
): UpdateRequest {
  const whole = options.normalizeBy ?? view;
  return {
    batch: view,
    totals: lossTotals(whole, { responseLength: longestResponse(whole), microBatchSize }),
    loss,
    microBatchSize,
    optimizer: { ...OPTIMIZER, ...options.optimizer },
    lrScale: options.lrScale ?? 1,
    entropyMetric: options.entropyMetric,
  };
}

/** One turn of {@link makeAgentBatch}: its tokens, its agent and prompt group, its reward and its advantage (default 0). */
export interface AgentTurn {
  prompt: number[];
  response: number[];
  agent: string;
  group?: string;
  reward?: number;
  advantage?: number;
}

/** A batch of turns of several agents (each turn its own trajectory), on one worker group `policy`. */
export function makeAgentBatch(turns: readonly AgentTurn[]): TrainingBatch {
  const batch = TrainingBatch.fromTurns(
    turns.map((turn, row) =>
      makeTurn({
        groupId: turn.group ?? 'g0',
        trajectoryId: `t${row}`,
        agentId: turn.agent,
        round: 0,
        workerGroupId: 'policy',
        index: 0,
        promptIds: turn.prompt,
        responseIds: turn.response,
        logProbs: turn.response.map(() => 0),
        valid: true,
        reward: turn.reward ?? 0,
      }),
    ),
  );
  const R = batch.responseLength;
  turns.forEach((turn, r) => turn.response.forEach((_, j) => (batch.advantages[r * R + j] = turn.advantage ?? 0)));
  return batch;
}

/** Six turns of three agents (a, b, c) with mixed advantages, of different lengths: for per-agent gradient tests. */
export const AGENT_TURNS: AgentTurn[] = [
  { prompt: [3, 7, 1], response: [9, 4, 2], agent: 'a', advantage: 0.8 },
  { prompt: [5, 2], response: [11, 6], agent: 'b', advantage: -1.1 },
  { prompt: [3, 7, 1], response: [8, 8, 1, 5], agent: 'a', advantage: -0.3 },
  { prompt: [12, 4, 4], response: [7], agent: 'c', advantage: 0.5 },
  { prompt: [5, 2], response: [10, 3, 3], agent: 'b', advantage: 0.9 },
  { prompt: [6], response: [1, 2], agent: 'a', advantage: 1.4 },
];
