import type { LossFunction, LossInput, TensorOps } from '@drmas/core';

export { randomWeights, tinyConfigJson } from '../../../models/test/modelFixtures.js';
export { makeBatch, updateRequest } from '../../backend-tfjs/test/trainingFixtures.js';

/** Advantage-weighted token-mean log-likelihood. */
export const weightedLogLikelihood: LossFunction = {
  compute<T>(ops: TensorOps<T>, input: LossInput<T>) {
    const weighted = ops.mul(ops.mul(input.logProbs, input.advantages), input.responseMask);
    return { loss: ops.div(ops.neg(ops.sum(weighted)), input.totals.tokens), metrics: {} };
  },
};

export function maxAbsDiff(a: number[][], b: number[][]): number {
  let m = 0;
  a.forEach((row, i) => {
    if (row.length !== b[i].length) m = Infinity;
    row.forEach((x, j) => (m = Math.max(m, Math.abs(x - b[i][j]))));
  });
  return m;
}
