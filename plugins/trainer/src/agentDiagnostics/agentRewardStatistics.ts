import type { TrainingBatch } from '@drmas/core';

/** One agent's reward statistics over a step's prompt groups (population statistics, as in Dr. MAS's Prop. 4.3). */
export interface AgentRewardStatistics {
  role: string;
  /** Mean over those groups of its rewards' standard deviation in the group. */
  rewardStd: number;
  /**
   * Mean over the groups whose rewards vary (sigma > 0) of (sigma_k^2 + (mu_k - mu)^2) / sigma^2: how much a baseline
   * shared by every agent of the group (GRPO's) scales the agent's expected squared gradient against its own
   * normalization; undefined when no group of the agent has sigma > 0.
   */
  inflationPredicted: number | undefined;
}

/** The batch's reward statistics per agent, and two sets of advantages from them for the inflation measurement. */
export interface AgentRewardDiagnosis {
  agents: AgentRewardStatistics[];
  /** Per token: (r - mu) / sigma of the row's prompt group, on trained tokens of groups with sigma > 0, else 0. */
  globalAdvantages: Float64Array;
  /** Per token: (r - mu_k) / sigma_k of the row's agent in its group, where sigma_k > 0, else 0 (per-agent normalization). */
  perAgentAdvantages: Float64Array;
}

/** The reward the estimators normalize: the sum of the row's token rewards over its response. */
function rowRewards(batch: TrainingBatch): Float64Array {
  const R = batch.responseLength;
  const out = new Float64Array(batch.rows);
  for (let row = 0; row < batch.rows; row++) {
    for (let t = 0; t < batch.responseLengths[row]!; t++) out[row]! += batch.tokenRewards[row * R + t]!;
  }
  return out;
}

/** Population mean and standard deviation of the values of each code. */
function statisticsBy(values: Float64Array, codes: Int32Array, count: number): { mean: Float64Array; std: Float64Array; n: Int32Array } {
  const n = new Int32Array(count);
  const mean = new Float64Array(count);
  const std = new Float64Array(count);
  for (let i = 0; i < values.length; i++) {
    n[codes[i]!]!++;
    mean[codes[i]!]! += values[i]!;
  }
  for (let c = 0; c < count; c++) mean[c] = n[c]! > 0 ? mean[c]! / n[c]! : 0;
  for (let i = 0; i < values.length; i++) std[codes[i]!]! += (values[i]! - mean[codes[i]!]!) ** 2;
  for (let c = 0; c < count; c++) std[c] = n[c]! > 0 ? Math.sqrt(std[c]! / n[c]!) : 0;
  return { mean, std, n };
}

/**
 * Dr. MAS's Proposition 4.3 on a step's batch. The samples are the rows (turns) of each prompt group; mu and sigma
 * are a group's reward mean and standard deviation over all its agents' rows, mu_k and sigma_k agent k's in the
 * group. Population statistics and no epsilon, so that the predicted inflation is the formula as written, and the
 * two advantage sets are the estimators' formulas (GRPO's global baseline; drmas's per-agent one, every turn its own
 * sample) without the estimators' options, whichever estimator the run trains with.
 */
export function diagnoseAgentRewards(batch: TrainingBatch): AgentRewardDiagnosis {
  const rewards = rowRewards(batch);
  const groups = batch.ids.group;
  const agents = batch.ids.agent;
  const groupCount = groups.names.length;
  const agentCount = agents.names.length;
  const pairCodes = Int32Array.from(groups.codes, (g, row) => g * agentCount + agents.codes[row]!);
  const global = statisticsBy(rewards, groups.codes, groupCount);
  const own = statisticsBy(rewards, pairCodes, groupCount * agentCount);
  const stats = agents.names.map((role, k) => {
    let groupsSeen = 0;
    let stdSum = 0;
    let varying = 0;
    let inflationSum = 0;
    for (let g = 0; g < groupCount; g++) {
      const pair = g * agentCount + k;
      if (own.n[pair] === 0) continue;
      groupsSeen++;
      stdSum += own.std[pair]!;
      const sigma = global.std[g]!;
      if (sigma === 0) continue;
      varying++;
      inflationSum += (own.std[pair]! ** 2 + (own.mean[pair]! - global.mean[g]!) ** 2) / sigma ** 2;
    }
    return {
      role,
      rewardStd: groupsSeen ? stdSum / groupsSeen : 0,
      inflationPredicted: varying ? inflationSum / varying : undefined,
    };
  });
  const R = batch.responseLength;
  const globalAdvantages = new Float64Array(batch.rows * R);
  const perAgentAdvantages = new Float64Array(batch.rows * R);
  for (let row = 0; row < batch.rows; row++) {
    const g = groups.codes[row]!;
    const pair = pairCodes[row]!;
    const a = global.std[g]! > 0 ? (rewards[row]! - global.mean[g]!) / global.std[g]! : 0;
    const b = own.std[pair]! > 0 ? (rewards[row]! - own.mean[pair]!) / own.std[pair]! : 0;
    for (let t = 0; t < R; t++) {
      if (batch.responseMask[row * R + t] === 0) continue;
      globalAdvantages[row * R + t] = a;
      perAgentAdvantages[row * R + t] = b;
    }
  }
  return { agents: stats, globalAdvantages, perAgentAdvantages };
}
