import type { BatchInputSource, Rollouts, StepContext, TrainingBatch } from '@drmas/core';

/** GiGPO's anchor states: the observation each turn acted on, as the orchestra recorded it. */
export const observationSource: BatchInputSource = {
  fill(batch) {
    batch.observations = batch.turns.map((turn) => turn.observation ?? '');
  },
};

/**
 * ReMax's baselines (veRL's `reward_baselines`): one greedy episode (temperature 0) of each task in the batch, asked
 * of the kernel's `Rollouts` (`rerun`, which whichever plugin produces the step's rollouts runs) with the policy that
 * sampled the batch (no update has happened yet in the step); each row's baseline is the outcome of its task's greedy
 * episode.
 */
export class GreedyBaselineSource implements BatchInputSource {
  constructor(private readonly rollouts: () => Rollouts) {}

  async fill(batch: TrainingBatch, step: StepContext): Promise<void> {
    const taskOfGroup = new Map(batch.trajectories.map((t) => [t.groupId, t.taskId]));
    const taskIds = [...new Set(taskOfGroup.values())];
    const run = await this.rollouts().rerun({ taskIds, samplesPerTask: 1, seed: 0, label: 'greedy', sampling: { temperature: 0 } }, step);
    const outcomeOf = new Map(taskIds.map((id, i) => [id, run.trajectories[i]?.outcome ?? 0]));
    const { codes, names } = batch.ids.group;
    batch.baselineRewards = Float64Array.from(codes, (code) => outcomeOf.get(taskOfGroup.get(names[code]!)!) ?? 0);
    const outcomes = [...outcomeOf.values()];
    step.metrics['rollout/greedy_baseline_mean'] = outcomes.reduce((a, b) => a + b, 0) / Math.max(1, outcomes.length);
  }
}
