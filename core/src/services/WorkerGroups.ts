import type { PolicyBackend } from '../compute/PolicyBackend.js';
import type { TextCodec } from '../compute/TextCodec.js';
import type { RunContext } from '../data/StepContext.js';
import { createToken } from '../di/Token.js';

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
}

/** A worker group as the config plans it, before its engines load. */
export interface PlannedWorkerGroup {
  id: string;
  /** The model id under `models` it runs (a LoRA agent's group: the model its adapter sits on). */
  model: string;
  agents: string[];
  /** A LoRA agent's group: the agent, and the saved adapter it starts from (absent: PEFT's init, the base model). */
  lora?: { agent: string; adapter?: string };
}

/** The worker groups of a run, created in `setup` (stage MODEL) from `models` and `agents`. */
export interface WorkerGroups {
  /** The ids of the run's worker groups, known from the config before `setup` creates them (a resumed checkpoint must hold these). */
  ids(): string[];
  /** The groups `setup` will create, known from the config. */
  planned(): PlannedWorkerGroup[];
  /**
   * Loads every group's sampling engine alone, as both its trainer and its rollout engine, with no reference model:
   * for processes that only sample (a rollout worker, the gateway). Engines are chosen as for training.
   */
  createForSampling(run: RunContext): Promise<void>;
  all(): WorkerGroup[];
  get(id: string): WorkerGroup;
  /** The group that trains `agentId`; a DrmasError naming `agents.<id>.model` when there is none. */
  forAgent(agentId: string): WorkerGroup;
  /** Releases every group's engines. */
  dispose(): void;
}
export const WorkerGroups = createToken<WorkerGroups>('WorkerGroups', { label: 'worker groups' });
