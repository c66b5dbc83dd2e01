import type { AdvantageEstimator as KernelEstimator, RolloutBatch, StepContext, Turn } from '@drmas/core';
import { computeAdvantageColumnar, type ColumnarAdvantageInput, type ColumnarAdvantageOptions } from '../computeAdvantage.js';
import { zeroStdGroups } from '../sampling/zeroStdGroups.js';

class Codes {
  private readonly map = new Map<string, number>();
  readonly codes: Int32Array;
  constructor(rows: number) {
    this.codes = new Int32Array(rows);
  }
  set(row: number, id: string): void {
    let code = this.map.get(id);
    if (code === undefined) {
      code = this.map.size;
      this.map.set(id, code);
    }
    this.codes[row] = code;
  }
}

/**
 * Runs a named estimator over the agent turns of a rollout batch: one row per turn, the turn's scalar reward on
 * its last response token (or its `tokenRewards`), groups from the turns' keys; writes per-token advantages and
 * returns back onto the turns.
 */
export class RolloutAdvantageEstimator implements KernelEstimator {
  constructor(readonly name: string, private readonly options: () => ColumnarAdvantageOptions) {}

  estimate(batch: RolloutBatch, step?: StepContext): RolloutBatch {
    const turns: Turn[] = batch.trajectories.flatMap((t) => t.turns);
    const rows = turns.length;
    if (rows === 0) return batch;
    const rowLength = Math.max(1, ...turns.map((t) => t.responseIds.length));
    const tokenRewards = new Float64Array(rows * rowLength);
    const responseMask = new Float64Array(rows * rowLength);
    const group = new Codes(rows);
    const trajectory = new Codes(rows);
    const agent = new Codes(rows);
    const turnOf = new Codes(rows);
    const workerGroup = new Codes(rows);
    const hasValues = turns.every((t) => t.values);
    const values = hasValues ? new Float64Array(rows * rowLength) : undefined;
    const anchors: string[] = [];
    const stepReturns = new Float64Array(rows);
    const baselines = new Float64Array(rows);
    turns.forEach((turn, row) => {
      const offset = row * rowLength;
      const length = turn.responseIds.length;
      for (let j = 0; j < length; j++) responseMask[offset + j] = 1;
      if (turn.tokenRewards) turn.tokenRewards.forEach((r, j) => { tokenRewards[offset + j] = r; });
      else tokenRewards[offset + Math.max(0, length - 1)] = turn.reward ?? 0;
      if (values) turn.values!.forEach((v, j) => { values[offset + j] = v; });
      group.set(row, turn.groupId);
      trajectory.set(row, turn.trajectoryId);
      agent.set(row, turn.agentId);
      turnOf.set(row, `${turn.agentId}#${turn.step}`);
      workerGroup.set(row, turn.workerGroupId);
      anchors.push(turn.observation ?? '');
      stepReturns[row] = Number(turn.info?.stepReturn ?? turn.reward ?? 0);
      baselines[row] = Number(turn.info?.baselineReward ?? 0);
    });
    const input: ColumnarAdvantageInput = {
      rowLength, tokenRewards, responseMask, values,
      groupCodes: group.codes, trajectoryCodes: trajectory.codes, agentCodes: agent.codes, turnCodes: turnOf.codes,
      workerGroupCodes: workerGroup.codes, anchorObservations: anchors, stepRewards: stepReturns, baselineRewards: baselines,
    };
    const result = computeAdvantageColumnar(this.name, input, this.options());
    turns.forEach((turn, row) => {
      const offset = row * rowLength;
      const length = turn.responseIds.length;
      turn.advantages = Array.from(result.advantages.subarray(offset, offset + length));
      turn.returns = Array.from(result.returns.subarray(offset, offset + length));
      if (result.lossRowMask && result.lossRowMask[row] === 0) turn.excludeFromLoss = true;
    });
    if (step) {
      const outcomes = batch.trajectories.map((t) => t.outcome ?? 0);
      step.metrics['advantage/frac_reward_zero_std'] = zeroStdGroups(outcomes, batch.trajectories.map((t) => t.groupId)).fracRewardZeroStd;
      let sum = 0;
      let sq = 0;
      let count = 0;
      for (let i = 0; i < responseMask.length; i++) {
        if (responseMask[i] === 0) continue;
        sum += result.advantages[i];
        sq += result.advantages[i] ** 2;
        count++;
      }
      const mean = count ? sum / count : 0;
      step.metrics['advantage/mean'] = mean;
      step.metrics['advantage/std'] = count ? Math.sqrt(Math.max(0, sq / count - mean * mean)) : 0;
    }
    return batch;
  }
}
