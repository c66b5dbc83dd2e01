import type { ParamGroupSettings, PolicyBackend } from '../compute/PolicyBackend.js';
import type { TextCodec } from '../compute/TextCodec.js';
import { createToken } from '../di/Token.js';

/** Training settings of a worker group: the model's optimizer with the agents' shared overrides applied. */
export interface WorkerGroupTraining {
  lr: number;
  betas: [number, number];
  eps: number;
  weightDecay: number;
  warmupSteps: number;
  schedule: 'constant' | 'warmup_constant' | 'cosine';
  maxGradNorm: number;
  /** Per-parameter settings (`models.<id>.optimizer.paramGroups`). */
  paramGroups: ParamGroupSettings[];
  /** Rows per micro-batch (gradient accumulation). */
  microBatchSize: number;
  /** Optimizer steps per training step: the group's turns are split into this many mini-batches. */
  miniBatches: number;
  /** Passes over the group's turns per training step (PPO epochs). */
  epochs: number;
}

/** One trained model and the agents that use it (DESIGN §5): agents on the same model id share it. */
export interface WorkerGroup {
  /** The model id under `models`. */
  id: string;
  /** Agent roles trained by this group, in config order. */
  agents: string[];
  /** The engine that trains (and scores old log-probs). */
  trainer: PolicyBackend;
  /** The engine that samples; the trainer itself unless `models.<id>.rollout` names another. */
  rollout: PolicyBackend;
  codec: TextCodec | undefined;
  training: WorkerGroupTraining;
}

/** The worker groups of a run, created in `setup` (stage MODEL) from `models` and `agents`. */
export interface WorkerGroups {
  all(): WorkerGroup[];
  get(id: string): WorkerGroup;
  /** The group that trains `agentId`; a DrmasError naming `agents.<id>.model` when there is none. */
  forAgent(agentId: string): WorkerGroup;
}
export const WorkerGroups = createToken<WorkerGroups>('WorkerGroups', { label: 'worker groups' });
