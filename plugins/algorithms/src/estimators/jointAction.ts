import { AlgorithmInputError } from '../errors.js';
import { combineCodings, type Coding } from '../grouping/coding.js';
import { writeRowAdvantages } from '../kernels/broadcast.js';
import { groupStatistics } from '../kernels/groupStatistics.js';
import { rowScores } from '../kernels/rowScores.js';
import type { EstimatorDefinition, EstimatorView, ResolvedAdvantageOptions } from './types.js';

/** How a joint action's return is compared with the others of its group: CoMLRL's `advantage_mode` `mean`, `rloo`, `max`. */
export type JointBaseline = 'mean' | 'leave_one_out' | 'max';

/**
 * Joint-action advantages as CoMLRL's MAGRPO trainer computes them (`comlrl/trainers/reinforce/magrpo.py`,
 * `_compute_advantages`). A joint action is what all agents of one trajectory did at one round (its rows
 * at that round); its reward is the mean of those rows' scores, its return G = r + gamma G_next along the trajectory's
 * joint actions in row order. Joint actions of one group (the prompt) at one round are the K samples of a node:
 * `mean` A = G - mean, `leave_one_out` A = G - mean of the others = K/(K-1) (G - mean), `max` A = G - max; a group of
 * one gets 0. Every row of the joint action gets its A; returns are G. No division by the std (`normalizeByStd` does
 * not apply), as in CoMLRL.
 */
export function jointActionAdvantages(view: EstimatorView, options: ResolvedAdvantageOptions, baseline: JointBaseline, name: string): void {
  const trajectories = view.trajectories;
  if (trajectories === undefined) {
    throw new AlgorithmInputError(
      'trajectoryIds',
      `is required by estimator '${name}' (a joint action is a trajectory's rows at one round)`,
    );
  }
  const scores = rowScores(view);
  const rows = scores.length;
  const rounds: Coding = view.rounds ?? { codes: new Int32Array(rows), count: rows > 0 ? 1 : 0 };
  const joint = combineCodings(trajectories, rounds);
  const J = joint.count;
  const reward = new Float64Array(J);
  const rowsOf = new Int32Array(J);
  const groupOf = new Int32Array(J).fill(-1);
  const roundOf = new Int32Array(J);
  const sequence: number[][] = Array.from({ length: trajectories.count }, () => []);
  for (let r = 0; r < rows; r++) {
    const j = joint.codes[r]!;
    const group = view.groups.codes[r]!;
    if (groupOf[j] === -1) {
      groupOf[j] = group;
      roundOf[j] = rounds.codes[r]!;
      sequence[trajectories.codes[r]!]!.push(j);
    } else if (groupOf[j] !== group) {
      throw new AlgorithmInputError(
        'options.groupKey',
        `puts the rows of one joint action (row ${r}'s trajectory at its round) in two groups; '${name}' compares whole joint actions: use groupKey prompt`,
      );
    }
    reward[j]! += scores[r]!;
    rowsOf[j]!++;
  }
  const returns = new Float64Array(J);
  for (let j = 0; j < J; j++) reward[j]! /= rowsOf[j]!;
  for (const order of sequence) {
    let next = 0;
    for (let k = order.length - 1; k >= 0; k--) {
      const j = order[k]!;
      returns[j] = reward[j]! + options.gamma * next;
      next = returns[j]!;
    }
  }
  const nodes = combineCodings({ codes: groupOf, count: view.groups.count }, { codes: roundOf, count: rounds.count });
  const stats = groupStatistics(returns, nodes.codes, nodes.count, 'self');
  const max = new Float64Array(nodes.count).fill(-Infinity);
  for (let j = 0; j < J; j++) max[nodes.codes[j]!] = Math.max(max[nodes.codes[j]!]!, returns[j]!);
  const advantage = new Float64Array(J);
  for (let j = 0; j < J; j++) {
    const node = nodes.codes[j]!;
    const n = stats.size[node]!;
    const centered = returns[j]! - stats.mean[node]!;
    if (n < 2) advantage[j] = 0;
    else if (baseline === 'mean') advantage[j] = centered;
    else if (baseline === 'leave_one_out') advantage[j] = (centered * n) / (n - 1);
    else advantage[j] = returns[j]! - max[node]!;
  }
  const perRow = (values: Float64Array) => Float64Array.from(joint.codes, (j) => values[j]!);
  writeRowAdvantages(view, perRow(advantage), perRow(returns));
}

function jointActionEstimator(name: string, baseline: JointBaseline): EstimatorDefinition {
  return {
    name,
    defaultGroupKey: 'prompt',
    requires: [],
    compute: (view, options) => jointActionAdvantages(view, options, baseline, name),
  };
}

/** MAGRPO (CoMLRL): the mean return of the prompt's joint actions at the round is the baseline. */
export const magrpo = jointActionEstimator('magrpo', 'mean');
/** MARLOO (CoMLRL): the mean return of the other joint actions is the baseline. */
export const marloo = jointActionEstimator('marloo', 'leave_one_out');
/** MAREMAX (CoMLRL): the best joint action's return is the baseline. */
export const maremax = jointActionEstimator('maremax', 'max');
