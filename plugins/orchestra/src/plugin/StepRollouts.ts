import { createToken, type RolloutBatch, type StepContext, type Trajectory } from '@drmas/core';
import type { RunEpisodesRequest } from '../rollout/OrchestraRunner.js';

/** A step's episodes to run: the drawn tasks, the sampling seed and id prefix, and the rollout's index in the run. */
export interface StepRolloutRequest extends RunEpisodesRequest {
  /** How many rollouts ran before this one in the run (the `r` of the id prefix `s<step>r<rolloutIndex>`). */
  rolloutIndex: number;
}

/**
 * The training rollout of a step in two halves, for a plugin that runs the episodes elsewhere (rollout workers):
 * `draw` takes the step's tasks from the environment and its seed from the orchestra's random stream, exactly as the
 * in-process rollout does (it is the same function), and `batch` turns the episodes' trajectories, in task order,
 * into the step's RolloutBatch with its metrics.
 */
export interface StepRollouts {
  draw(step: StepContext): Promise<StepRolloutRequest>;
  batch(step: StepContext, trajectories: Trajectory[]): RolloutBatch;
}

export const StepRollouts = createToken<StepRollouts>('StepRollouts', { label: 'step rollouts' });
