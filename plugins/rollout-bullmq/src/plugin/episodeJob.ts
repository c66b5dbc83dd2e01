import type { EnvTask, Trajectory } from '@drmas/core';

/** The BullMQ job name of one prompt group's episodes. */
export const EPISODE_JOB = 'episodes';

/** The weights workers must sample with: one checkpoint folder per worker group, tagged with a version. */
export interface WeightsRelease {
  /** The training step whose update produced the weights (0: the weights the run started with, or resumed from). */
  version: number;
  /** Unique to this trainer process and version: a worker reloads when the tag differs from the one it loaded. */
  tag: string;
  /** Checkpoint folder of each worker group's weights, by worker group id. */
  paths: Record<string, string>;
}

/** One prompt group of a step: what a worker needs to run its episodes exactly as the in-process rollout would. */
export interface EpisodeJobData {
  step: number;
  /** The rollout's index in the run (`StepRolloutRequest.rolloutIndex`). */
  rolloutIndex: number;
  /** The rollout's seed (the whole step's: each agent call derives its own from it). */
  seed: number;
  task: EnvTask;
  /** The group's index in the step's batch: its id suffix `-p<group>` and its rows' sampling keys. */
  group: number;
  samplesPerTask: number;
  idPrefix: string;
  sampleStreams: 'position' | 'row';
  weights: WeightsRelease;
}

export interface EpisodeJobResult {
  /** The rollout worker's name (host:pid). */
  rolloutWorker: string;
  trajectories: Trajectory[];
}
