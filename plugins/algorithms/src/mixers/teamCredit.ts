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
  /** A_k = w_k (y - Q_tot) / sum_j w_j^2 over the agents present, w_k = dQ_tot/dV_k; 0 for an absent agent. */
  advantages: Float64Array;
  /** y_k = V_k + A_k: the return agent k's critic regresses on. */
  returns: Float64Array;
}

/**
 * Splits the team TD error y - Q_tot among the agents present at the step by how much each one's value moves Q_tot:
 * A_k = w_k (y - Q_tot) / sum_j w_j^2, the smallest change of the agents' values that brings the mixer, linearized at
 * V, to the target (sum_k w_k A_k = y - Q_tot). It is the team loss 0.5 (Q_tot - y)^2's gradient in V_k, -w_k (y - Q_tot),
 * normalized by |w|^2 (normalized LMS, the Gauss-Newton step): a critic regressed on y_k = V_k + A_k moves in the team
 * loss's direction and, reaching its target, moves Q_tot to y and not past it whatever the mixer's scale (unnormalized,
 * a mixer with |w| > 1 makes the critics overshoot: measured on the toy task, QMIX's team value swung by +-1 from step
 * to step and the policies did not learn). w_k >= 0, so A_k has the team error's sign: no agent is pushed against the
 * team. VDN (w_k = 1) splits the team error equally among the agents present.
 */
export function agentCredits(
  mixer: ValueMixer,
  values: ArrayLike<number>,
  state: ArrayLike<number>,
  target: number,
  present?: ArrayLike<boolean>,
): AgentCredit {
  const { total, weights } = mixer.mix(values, state);
  const isPresent = (k: number) => present === undefined || present[k] === true;
  let norm = 0;
  weights.forEach((w, k) => (norm += isPresent(k) ? w * w : 0));
  const error = target - total;
  const advantages = weights.map((w, k) => (isPresent(k) && norm > 0 ? (w * error) / norm : 0));
  const returns = advantages.map((a, k) => values[k]! + a);
  return { total, advantages, returns };
}
