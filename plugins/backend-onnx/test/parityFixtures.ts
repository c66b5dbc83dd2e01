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
  if (a.length !== b.length) return Infinity;
  let m = 0;
  a.forEach((row, i) => {
    const other = b[i]!;
    if (row.length !== other.length) m = Infinity;
    row.forEach((x, j) => (m = Math.max(m, Math.abs(x - other[j]!))));
  });
  return m;
}
