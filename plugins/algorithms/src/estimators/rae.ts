import { AlgorithmInputError } from '../errors.js';
import { combineCodings } from '../grouping/coding.js';
import { writeRowAdvantages } from '../kernels/broadcast.js';
import { rowScores } from '../kernels/rowScores.js';
import type { EstimatorDefinition, EstimatorState } from './types.js';

/** Each role's moving-average baseline, by role name; a role not seen yet has baseline 0. */
export class RoleBaselines implements EstimatorState {
  private readonly baselines = new Map<string, number>();

  get(role: string): number {
    return this.baselines.get(role) ?? 0;
  }

  set(role: string, value: number): void {
    this.baselines.set(role, value);
  }

  getState(): Record<string, number> {
    return Object.fromEntries([...this.baselines].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  setState(state: unknown): void {
    if (state === null || typeof state !== 'object' || Array.isArray(state)) {
      throw new AlgorithmInputError('state', 'RAE baselines must be an object of role: number');
    }
    this.baselines.clear();
    for (const [role, value] of Object.entries(state)) {
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        throw new AlgorithmInputError(`state.${role}`, `RAE baseline must be a finite number, got ${JSON.stringify(value)}`);
      }
      this.baselines.set(role, value);
    }
  }
}

/**
 * SPIRAL's Role-conditioned Advantage Estimation (arXiv 2506.24119; `train_spiral.py`, `prepare_trajectories` with
 * `use_role_baseline`): one moving-average baseline per role, kept across steps. Trajectories are taken in row
 * order; for each role in a trajectory, its rows get A = r - b (b read before the update, as SPIRAL's "get the
 * baseline before updating to be unbiased"), then b <- alpha b + (1 - alpha) R, with R the mean score of the role's
 * rows in that trajectory and alpha `raeDecay` (0.95, SPIRAL's `role_baseline_ema_gamma`). Baselines start at 0.
 * No groups: rows of every prompt share the role's baseline. Returns equal the advantages.
 */
export const rae: EstimatorDefinition = {
  name: 'rae',
  requires: [],
  createState: () => new RoleBaselines(),
  compute(view, options, state) {
    const { agents, agentNames, trajectories } = view;
    if (agents === undefined || agentNames === undefined || agentNames.length < agents.count) {
      throw new AlgorithmInputError('agentIds', "is required by estimator 'rae' (its baselines are per role)");
    }
    if (trajectories === undefined) {
      throw new AlgorithmInputError('trajectoryIds', "is required by estimator 'rae' (a role's baseline moves once per trajectory)");
    }
    if (!(state instanceof RoleBaselines)) throw new AlgorithmInputError('state', "estimator 'rae' needs the state its createState made");
    const scores = rowScores(view);
    // (trajectory, role) units, coded by first appearance in row order, so trajectories move the baselines in order.
    const units = combineCodings(trajectories, agents);
    const sum = new Float64Array(units.count);
    const count = new Int32Array(units.count);
    const roleOf = new Array<string>(units.count);
    for (let r = 0; r < scores.length; r++) {
      const u = units.codes[r]!;
      sum[u]! += scores[r]!;
      count[u]!++;
      roleOf[u] = agentNames[agents.codes[r]!]!;
    }
    const baseline = new Float64Array(units.count);
    const alpha = options.raeDecay;
    for (let u = 0; u < units.count; u++) {
      const role = roleOf[u]!;
      const b = state.get(role);
      baseline[u] = b;
      state.set(role, alpha * b + (1 - alpha) * (sum[u]! / count[u]!));
    }
    writeRowAdvantages(
      view,
      scores.map((score, r) => score - baseline[units.codes[r]!]!),
    );
  },
};
