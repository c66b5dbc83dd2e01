import type { Coding } from './coding.js';
import { similarityRatio } from './sequenceMatcher.js';

/**
 * GiGPO step groups, mirroring verl-agent `build_step_group`: within each group, rows with identical anchor
 * observations form one step group; with a similarity threshold, rows are clustered greedily in row order,
 * each joining the first cluster whose representative (first member) has ratio(obs, rep) >= threshold.
 */
export function anchorStepGroups(observations: readonly string[], groups: Coding, similarityThreshold: number | undefined): Coding {
  const rows = observations.length;
  const codes = new Int32Array(rows);
  let count = 0;
  if (similarityThreshold === undefined) {
    const seen = new Map<string, number>();
    for (let r = 0; r < rows; r++) {
      const key = `${groups.codes[r]}\u0000${observations[r]}`;
      let code = seen.get(key);
      if (code === undefined) {
        code = count++;
        seen.set(key, code);
      }
      codes[r] = code;
    }
    return { codes, count };
  }
  const clusters: Array<Array<{ rep: string; code: number }>> = Array.from({ length: groups.count }, () => []);
  for (const [r, obs] of observations.entries()) {
    const list = clusters[groups.codes[r]!]!;
    let code = -1;
    for (const cluster of list) {
      if (similarityRatio(obs, cluster.rep) >= similarityThreshold) {
        code = cluster.code;
        break;
      }
    }
    if (code < 0) {
      code = count++;
      list.push({ rep: obs, code });
    }
    codes[r] = code;
  }
  return { codes, count };
}
