import type { LossFunction, LossInput, TensorOps, WorkerGroupBatch } from '@drmas/core';

export { randomWeights, tinyConfigJson } from '../../../models/test/modelFixtures.js';

/** Advantage-weighted token-mean log-likelihood. */
export const weightedLogLikelihood: LossFunction = {
  compute<T>(ops: TensorOps<T>, input: LossInput<T>) {
    const weighted = ops.mul(ops.mul(input.logProbs, input.advantages), input.responseMask);
    return { loss: ops.div(ops.neg(ops.sum(weighted)), input.totals.tokens), metrics: {} };
  },
};

export function makeBatch(pairs: [number[], number[]][]): WorkerGroupBatch {
  const rows = pairs.length;
  const responseLength = Math.max(...pairs.map(([, r]) => r.length));
  const responseIds = new Int32Array(rows * responseLength);
  const responseMask = new Float32Array(rows * responseLength);
  const advantages = new Float32Array(rows * responseLength);
  pairs.forEach(([, response], r) =>
    response.forEach((id, j) => {
      responseIds[r * responseLength + j] = id;
      responseMask[r * responseLength + j] = 1;
      advantages[r * responseLength + j] = r % 2 === 0 ? 1 : -0.5;
    }),
  );
  return {
    workerGroupId: 'test', agentIds: ['agent'], rows, responseLength, keys: [],
    promptIds: pairs.map(([p]) => Int32Array.from(p)),
    responseLengths: Int32Array.from(pairs, ([, r]) => r.length),
    responseIds, responseMask, advantages, rolloutLogProbs: new Float32Array(rows * responseLength),
  };
}

export function maxAbsDiff(a: number[][], b: number[][]): number {
  let m = 0;
  a.forEach((row, i) => {
    if (row.length !== b[i].length) m = Infinity;
    row.forEach((x, j) => (m = Math.max(m, Math.abs(x - b[i][j]))));
  });
  return m;
}
