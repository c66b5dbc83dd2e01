import { AlgorithmInputError } from '../../src/errors.js';

/** Entropy of softmax(z): logsumexp(z) - sum softmax(z) z (veRL `entropy_from_logits`), stabilized by the max. */
function entropyOf(z: ArrayLike<number>): number {
  let max = -Infinity;
  for (let k = 0; k < z.length; k++) if (z[k]! > max) max = z[k]!;
  let sum = 0;
  let weighted = 0;
  for (let k = 0; k < z.length; k++) {
    const zk = z[k]!;
    const e = Math.exp(zk - max);
    sum += e;
    weighted += e * zk;
  }
  return max + Math.log(sum) - weighted / sum;
}

/** Per-token entropy of `[rows][tokens][vocab]` logits. */
export function entropyFromLogits(logits: ReadonlyArray<ReadonlyArray<ArrayLike<number>>>): number[][] {
  if (logits === null || typeof logits !== 'object') throw new AlgorithmInputError('logits', 'expected [rows][tokens][vocab]');
  const out: number[][] = [];
  for (let r = 0; r < logits.length; r++) {
    const row = logits[r]!;
    const entropies = new Array<number>(row.length);
    for (let t = 0; t < row.length; t++) {
      const z = row[t]!;
      if (z.length === 0) throw new AlgorithmInputError('logits', `row ${r} token ${t} has an empty vocabulary`);
      entropies[t] = entropyOf(z);
    }
    out.push(entropies);
  }
  return out;
}
