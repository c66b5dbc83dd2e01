import { rowTrains, type IdColumn, type Metrics, type TrainingBatch } from '@drmas/core';

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
  /**
   * The same ratio summed over turns as `inflation_measured` sums gradients: the agent's squared advantages under the
   * global baseline over those under its own, over all its turns. It differs from `inflationPredicted` where some of
   * the agent's groups have sigma > 0 but sigma_k = 0: the formula counts them as 1 turn's worth of gradient each under
   * per-agent normalization, which gives them none. Undefined when every per-agent advantage is 0.
   */
  inflationAdvantages: number | undefined;
  /**
   * Of the agent's turns in groups whose rewards vary (sigma > 0), the share whose own rewards do not (sigma_k = 0):
   * GRPO moves them on the other agents' rewards, per-agent normalization not at all. Undefined when none varies.
   */
  constantShare: number | undefined;
}

/** A step's turns: one reward, prompt group and agent per turn (`batch.ids`' shape: codes into names). */
export interface TurnRewards {
  rewards: Float64Array;
  groups: IdColumn;
  agents: IdColumn;
}

/** The turns' reward statistics per agent, and two advantages per turn for the inflation measurement. */
export interface TurnRewardDiagnosis {
  agents: AgentRewardStatistics[];
  /** Per turn: (r - mu) / sigma of its prompt group where sigma > 0, else 0 (GRPO's global baseline). */
  globalAdvantages: Float64Array;
  /** Per turn: (r - mu_k) / sigma_k of its agent in its group where sigma_k > 0, else 0 (per-agent normalization). */
  perAgentAdvantages: Float64Array;
}

/** The batch's reward statistics per agent, and the two advantage sets broadcast over each row's trained tokens. */
export interface AgentRewardDiagnosis {
  agents: AgentRewardStatistics[];
  globalAdvantages: Float64Array;
  perAgentAdvantages: Float64Array;
}

/**
 * An agent's statistics as step metrics: `agent/<role>/reward_std`, and where defined `inflation_predicted`,
 * `inflation_advantages` and `constant_share`.
 */
export function agentRewardMetrics(agent: AgentRewardStatistics): Metrics {
  const metrics: Metrics = { [`agent/${agent.role}/reward_std`]: agent.rewardStd };
  const defined = {
    inflation_predicted: agent.inflationPredicted,
    inflation_advantages: agent.inflationAdvantages,
    constant_share: agent.constantShare,
  };
  for (const [name, value] of Object.entries(defined)) if (value !== undefined) metrics[`agent/${agent.role}/${name}`] = value;
  return metrics;
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
 * Dr. MAS's Proposition 4.3 on a step's turns. The samples are the turns of each prompt group; mu and sigma are a
 * group's reward mean and standard deviation over all its agents' turns, mu_k and sigma_k agent k's in the group.
 * Population statistics and no epsilon, so that the predicted inflation is the formula as written, and the two
 * advantage sets are the estimators' formulas (GRPO's global baseline; drmas's per-agent one, every turn its own
 * sample) without the estimators' options, whichever estimator the run trains with.
 */
export function diagnoseTurnRewards({ rewards, groups, agents }: TurnRewards): TurnRewardDiagnosis {
  const groupCount = groups.names.length;
  const agentCount = agents.names.length;
  const pairCodes = Int32Array.from(groups.codes, (g, turn) => g * agentCount + agents.codes[turn]!);
  const global = statisticsBy(rewards, groups.codes, groupCount);
  const own = statisticsBy(rewards, pairCodes, groupCount * agentCount);
  const globalAdvantages = new Float64Array(rewards.length);
  const perAgentAdvantages = new Float64Array(rewards.length);
  const squares = { global: new Float64Array(agentCount), perAgent: new Float64Array(agentCount) };
  for (let turn = 0; turn < rewards.length; turn++) {
    const g = groups.codes[turn]!;
    const pair = pairCodes[turn]!;
    const k = agents.codes[turn]!;
    globalAdvantages[turn] = global.std[g]! > 0 ? (rewards[turn]! - global.mean[g]!) / global.std[g]! : 0;
    perAgentAdvantages[turn] = own.std[pair]! > 0 ? (rewards[turn]! - own.mean[pair]!) / own.std[pair]! : 0;
    squares.global[k]! += globalAdvantages[turn]! ** 2;
    squares.perAgent[k]! += perAgentAdvantages[turn]! ** 2;
  }
  const stats = agents.names.map((role, k) => {
    let groupsSeen = 0;
    let stdSum = 0;
    let varying = 0;
    let inflationSum = 0;
    let varyingTurns = 0;
    let constantTurns = 0;
    for (let g = 0; g < groupCount; g++) {
      const pair = g * agentCount + k;
      if (own.n[pair] === 0) continue;
      groupsSeen++;
      stdSum += own.std[pair]!;
      const sigma = global.std[g]!;
      if (sigma === 0) continue;
      varying++;
      inflationSum += (own.std[pair]! ** 2 + (own.mean[pair]! - global.mean[g]!) ** 2) / sigma ** 2;
      varyingTurns += own.n[pair]!;
      if (own.std[pair] === 0) constantTurns += own.n[pair]!;
    }
    return {
      role,
      rewardStd: groupsSeen ? stdSum / groupsSeen : 0,
      inflationPredicted: varying ? inflationSum / varying : undefined,
      inflationAdvantages: squares.perAgent[k]! > 0 ? squares.global[k]! / squares.perAgent[k]! : undefined,
      constantShare: varyingTurns ? constantTurns / varyingTurns : undefined,
    };
  });
  return { agents: stats, globalAdvantages, perAgentAdvantages };
}

/** `diagnoseTurnRewards` on a step's batch, a row a turn, its advantages broadcast over the row's trained tokens. */
export function diagnoseAgentRewards(batch: TrainingBatch): AgentRewardDiagnosis {
  const turns = diagnoseTurnRewards({ rewards: rowRewards(batch), groups: batch.ids.group, agents: batch.ids.agent });
  const R = batch.responseLength;
  const globalAdvantages = new Float64Array(batch.rows * R);
  const perAgentAdvantages = new Float64Array(batch.rows * R);
  for (let row = 0; row < batch.rows; row++) {
    if (!rowTrains(batch, row)) continue;
    for (let t = 0; t < R; t++) {
      if (batch.responseMask[row * R + t] === 0) continue;
      globalAdvantages[row * R + t] = turns.globalAdvantages[row]!;
      perAgentAdvantages[row * R + t] = turns.perAgentAdvantages[row]!;
    }
  }
  return { agents: turns.agents, globalAdvantages, perAgentAdvantages };
}
