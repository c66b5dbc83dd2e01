import type { LossFunction, LossInput, TensorOps, WorkerGroupBatch } from '@drmas/core';

/** Token-mean cross-entropy of the response tokens (advantage-weighted): `-sum(A * logp * mask) / tokens`. */
export const weightedCrossEntropy: LossFunction = {
  compute<T>(ops: TensorOps<T>, input: LossInput<T>) {
    const weighted = ops.mul(ops.mul(input.logProbs, input.advantages), input.responseMask);
    const loss = ops.div(ops.neg(ops.sum(weighted)), input.totals.tokens);
    const tokenLogProb = ops.div(ops.sum(ops.mul(input.logProbs, input.responseMask)), input.totals.tokens);
    return { loss, metrics: { 'actor/mean_logprob': tokenLogProb } };
  },
};

/** A batch of `rows` (prompt, response) pairs with unit advantages, responses right-padded to the longest. */
export function makeBatch(pairs: [number[], number[]][], advantages?: number[]): WorkerGroupBatch {
  const rows = pairs.length;
  const responseLength = Math.max(...pairs.map(([, r]) => r.length));
  const responseIds = new Int32Array(rows * responseLength);
  const responseMask = new Float32Array(rows * responseLength);
  const adv = new Float32Array(rows * responseLength);
  pairs.forEach(([, response], r) =>
    response.forEach((id, j) => {
      responseIds[r * responseLength + j] = id;
      responseMask[r * responseLength + j] = 1;
      adv[r * responseLength + j] = advantages?.[r] ?? 1;
    }),
  );
  return {
    workerGroupId: 'test',
    agentIds: ['agent'],
    rows,
    responseLength,
    keys: pairs.map((_, r) => ({ groupId: 'g', trajectoryId: `t${r}`, agentId: 'agent', step: 0, workerGroupId: 'test' })),
    promptIds: pairs.map(([p]) => Int32Array.from(p)),
    responseLengths: Int32Array.from(pairs, ([, r]) => r.length),
    responseIds,
    responseMask,
    advantages: adv,
    rolloutLogProbs: new Float32Array(rows * responseLength),
  };
}
