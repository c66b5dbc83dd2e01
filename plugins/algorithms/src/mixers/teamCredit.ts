import { DrmasError } from '@drmas/core';
import type { ValueMixer } from './valueMixer.js';

/**
 * TD(lambda) targets of one episode's team values (pymarl's `build_td_lambda_targets`), the episode terminal after its
 * last joint step: y_{T-1} = r_{T-1}, y_t = r_t + gamma ((1 - lambda) Q_tot,t+1 + lambda y_{t+1}). lambda = 1 gives
 * the discounted return, lambda = 0 the one-step TD target.
 */
export function tdLambdaTargets(rewards: ArrayLike<number>, totals: ArrayLike<number>, gamma: number, lambda: number): Float64Array {
  if (rewards.length !== totals.length) {
    throw new DrmasError('INVALID_ARGUMENT', `${rewards.length} team rewards for ${totals.length} team values`, { key: 'totals' });
  }
  const T = rewards.length;
  const targets = new Float64Array(T);
  for (let t = T - 1; t >= 0; t--) {
    targets[t] = t === T - 1 ? rewards[t]! : rewards[t]! + gamma * ((1 - lambda) * totals[t + 1]! + lambda * targets[t + 1]!);
  }
  return targets;
}

/** Each agent's share of one joint step's team TD error. */
export interface AgentCredit {
  /** Q_tot at the step. */
  total: number;
  /** A_k = w_k (y - Q_tot), w_k = dQ_tot/dV_k. */
  advantages: Float64Array;
  /** y_k = V_k + A_k: the return agent k's critic regresses on. */
  returns: Float64Array;
}

/**
 * Splits the team TD error y - Q_tot among the agents by how much each one's value moves Q_tot. The team loss
 * 0.5 (Q_tot - y)^2 sends critic k the gradient w_k (Q_tot - y); a critic regressed on 0.5 (V_k - y_k)^2 receives
 * V_k - y_k, the same gradient when y_k = V_k + w_k (y - Q_tot). So each agent's critic trains on its own loss exactly
 * as the mixed team value would train it end to end, and its advantage A_k = y_k - V_k has the sign of the team's TD
 * error (w_k >= 0: no agent is pushed against the team) and a size in proportion to its influence on Q_tot. VDN
 * (w_k = 1) gives every agent the team TD error; the split comes from the critics, each learning its own part of the sum.
 */
export function agentCredits(mixer: ValueMixer, values: ArrayLike<number>, state: ArrayLike<number>, target: number): AgentCredit {
  const { total, weights } = mixer.mix(values, state);
  const error = target - total;
  const advantages = weights.map((w) => w * error);
  const returns = advantages.map((a, k) => values[k]! + a);
  return { total, advantages, returns };
}
