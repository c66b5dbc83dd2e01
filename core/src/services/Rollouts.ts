import type { SamplingParams } from '../compute/PolicyBackend.js';
import type { StepContext } from '../data/StepContext.js';
import type { RolloutBatch } from '../data/Turn.js';
import { createToken } from '../di/Token.js';

/** Episodes of tasks a step's rollout drew, asked for again (ReMax's greedy baselines). */
export interface RerunRequest {
  /** Ids of tasks this step's rollout drew (`Trajectory.taskId`); the episodes come back task by task, in this order. */
  taskIds: readonly string[];
  /** Episodes per task (one group each). */
  samplesPerTask: number;
  /** Root of the episodes' sampling seeds. */
  seed: number;
  /** Names the episodes: their group ids start with `s<step><label>`. */
  label: string;
  /** Replaces every agent's sampling settings (`{ temperature: 0 }`: greedy). */
  sampling?: Partial<Pick<SamplingParams, 'temperature' | 'topP' | 'topK' | 'maxNewTokens'>>;
}

/**
 * A step's rollouts, as the kernel runs them. A plugin that needs episodes inside a step (another round for dynamic
 * sampling, the step's tasks again for a baseline) asks here rather than calling the hooks itself, so the kernel sees
 * each round: it refuses a producer asking for its own rollout, and says what is missing when nothing produces one.
 */
export interface Rollouts {
  /**
   * The next rollout of the step from its producer (the `rollout` hook's first tap returning a batch): the step's own,
   * or a further round. NO_ROLLOUT when no tap returns one.
   */
  next(step: StepContext): Promise<RolloutBatch>;
  /** Episodes of tasks the step drew, run again as `request` says (the `rerun` hook's first tap returning a batch). */
  rerun(request: RerunRequest, step: StepContext): Promise<RolloutBatch>;
  /** Whether a plugin runs `rerun` requests (checked at `validate` by the plugins that will ask). */
  reruns(): boolean;
}

export const Rollouts = createToken<Rollouts>('Rollouts', { label: 'rollout service' });
