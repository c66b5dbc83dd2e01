import type { PolicyBackend } from '../compute/PolicyBackend.js';
import type { ValueModel } from '../compute/ValueModel.js';
import type { RunContext } from '../data/StepContext.js';
import { createToken } from '../di/Token.js';
import type { Roles } from './Roles.js';

/** Creates policy backends (one per worker group); chosen by name with `models.<id>.backend`. */
export interface BackendFactory {
  readonly name: string;
  /** Human-readable description of the runtime this factory would use, for `drmas info`. */
  describe?(): string;
  /**
   * The trained weights stay on a server and cannot be copied into a local engine (Tinker): the model samples on this
   * engine itself, and `models.<id>.rollout: auto` resolves to it.
   */
  readonly remoteWeights?: boolean;
  /** Where a model with these settings runs when that is another machine (a server's url), for `drmas info`. */
  location?(settings: Record<string, unknown>): string | undefined;
  /** Rank among the engines `models.<id>.rollout: auto` may pick, higher first; absent: never picked by `auto`. */
  readonly priority?: number;
  /**
   * Rank among the engines `models.<id>.backend: auto` may train on, higher first, for a model's settings (tfjs ranks
   * above onnx where tfjs-node-gpu would run it); absent: never picked by `auto` (an engine that does not train).
   */
  trainingPriority?(settings: Record<string, unknown>): number;
  /**
   * Why this factory cannot create a backend here (a package not installed, a library that does not load), or
   * undefined when it can. Initialises what it checks on the first call only and answers every call alike.
   */
  probe?(): Promise<string | undefined>;
  /**
   * The most memory a model with these settings can use on this backend (tfjs on wasm: 4 GiB), which caps the
   * default `trainer.memoryBudget`; undefined: only the machine's memory limits it.
   */
  memoryLimit?(settings: Record<string, unknown>): { bytes: number; reason: string } | undefined;
  /**
   * Bytes per sampled token this engine's training pass holds beyond the key/value cache (activations kept for the
   * backward pass, logits), a lower bound the memory check adds; with `critic`, a critic of its own trunk (that
   * model) trains beside the policy on this engine, and its pass counts too. Undefined: not counted.
   */
  trainingBytesPerToken?(settings: Record<string, unknown>, critic?: { model: string }): { bytes: number; reason: string } | undefined;
  create(options: { modelId: string; settings: Record<string, unknown>; run: RunContext }): Promise<PolicyBackend>;
  /**
   * Creates a critic (`critic` section): a decoder from `settings.model` with a zero-initialized scalar head, or, with
   * `shareTrunk`, a head on that policy's own trunk (which the value loss does not train). Absent: this engine has no
   * critics, and a config asking for one is refused.
   */
  createCritic?(options: {
    criticId: string;
    settings: Record<string, unknown>;
    run: RunContext;
    shareTrunk?: PolicyBackend;
  }): Promise<ValueModel>;
}
export const BackendFactory = createToken<BackendFactory>('BackendFactory', {
  label: 'backend',
  configKey: 'models.<id>.backend',
  named: true,
});

/** `models.<id>.backend` value that trains on the highest-ranked engine available (`trainingPriority`). */
export const AUTO_BACKEND = 'auto';

/** What a model's training engine must offer beyond training its policy. */
export interface TrainingNeeds {
  /** A critic takes after this model (`critic.learner`): only engines with `createCritic` qualify. */
  critic?: boolean;
}

/**
 * The factory that will train a model with `settings` as far as load time can tell: its `backend`, or for `auto` the
 * engine ranked first (which one loads is known only at setup); undefined when none is registered.
 */
export function expectedTrainingFactory(
  roles: Pick<Roles, 'getNamed' | 'namesOf'>,
  settings: Record<string, unknown>,
): BackendFactory | undefined {
  const backend = settings.backend as string;
  const name = backend === AUTO_BACKEND ? rankedTrainingEngines(roles, settings)[0] : backend;
  return name !== undefined && roles.namesOf(BackendFactory).includes(name) ? roles.getNamed(BackendFactory, name) : undefined;
}

/** An engine's name as `drmas info` shows it: with the server it runs on (`tinker at http://...`), if remote. */
export function describeEngine(roles: Pick<Roles, 'getNamed' | 'namesOf'>, name: string, settings: Record<string, unknown>): string {
  const location = roles.namesOf(BackendFactory).includes(name) ? roles.getNamed(BackendFactory, name).location?.(settings) : undefined;
  return location ? `${name} at ${location}` : name;
}

/** The engines `models.<id>.backend: auto` may train on for `settings` and `needs`, highest rank first. */
export function rankedTrainingEngines(
  roles: Pick<Roles, 'getNamed' | 'namesOf'>,
  settings: Record<string, unknown>,
  needs: TrainingNeeds = {},
): string[] {
  return roles
    .namesOf(BackendFactory)
    .map((name) => ({ name, factory: roles.getNamed(BackendFactory, name) }))
    .filter(({ factory }) => !needs.critic || factory.createCritic !== undefined)
    .map(({ name, factory }) => ({ name, rank: factory.trainingPriority?.(settings) }))
    .filter((c): c is { name: string; rank: number } => c.rank !== undefined)
    .sort((a, b) => b.rank - a.rank)
    .map((c) => c.name);
}
