import type { PolicyBackend } from '../compute/PolicyBackend.js';
import type { ValueModel } from '../compute/ValueModel.js';
import type { RunContext } from '../data/StepContext.js';
import type { MemoryBudget } from '../run/memoryBudget.js';
import { createToken } from '../di/Token.js';

/** What an engine can do for a model; a caller asks for those it needs (`Engines.select`). */
export const ENGINE_CAPABILITIES = ['sample', 'score', 'train', 'lora', 'critic', 'moments8bit'] as const;
export type EngineCapability = (typeof ENGINE_CAPABILITIES)[number];

/** Each capability as the messages say it: `engine "vllm" cannot score token log-probs`. */
export const CAPABILITY_TEXT: Readonly<Record<EngineCapability, string>> = Object.freeze({
  sample: 'sample',
  score: 'score token log-probs',
  train: 'train',
  lora: 'train LoRA adapters',
  critic: 'train critics',
  moments8bit: "hold AdamW's moments in 8 bits (optimizer.moments: 8bit)",
});

/**
 * An engine: it creates policy backends (one per worker group, one per `drmas score`), registered by name
 * (`ctx.provide(BackendFactory, 'onnx', factory)`) with a priority and its capabilities, and chosen by the engine
 * service (`Engines`) for every caller: `models.<id>.backend` and `.rollout`, critics, `--engine` flags.
 */
/** What an engine is created for: a policy (sampled, scored, trained) or a frozen reference that only scores. */
export type EnginePurpose = 'policy' | 'reference';

export interface BackendFactory {
  readonly name: string;
  /**
   * What it does: `sample` (generate), `score` (token log-probs), `train` (updates), `lora` (trains a LoRA adapter
   * per agent, `settings.lora`), `critic` (`createCritic`).
   */
  readonly capabilities: readonly EngineCapability[];
  /**
   * Rank among the engines `auto` may pick for a model with these settings, higher first (tfjs ranks above onnx where
   * tfjs-node-gpu runs it); absent: chosen only by name (a server, a scripted teacher).
   */
  priority?(settings: Record<string, unknown>): number;
  /** Human-readable description of the runtime this factory would use, for `drmas info`. */
  describe?(): string;
  /**
   * The trained weights stay on a server and cannot be copied into a local engine (Tinker): the model samples on this
   * engine itself, and `models.<id>.rollout: auto` resolves to it.
   */
  readonly remoteWeights?: boolean;
  /** Where a model with these settings runs when that is another machine (a server's url), for `drmas info`. */
  location?(settings: Record<string, unknown>): string | undefined;
  /**
   * Why this factory cannot create a backend here (a package not installed, a library that does not load), or
   * undefined when it can. Initialises what it checks on the first call only and answers every call alike.
   */
  probe?(): Promise<string | undefined>;
  /**
   * Why it will not run a model with these settings (its weights cannot fit the runtime's memory, a server it needs
   * is not named), or undefined; reads at most the model's config.json.
   */
  refuses?(settings: Record<string, unknown>): string | undefined;
  /**
   * The most memory a model with these settings can use on this backend (tfjs on wasm: 4 GiB), which caps the
   * default `trainer.memoryBudget`; undefined: only the machine's memory limits it.
   */
  memoryLimit?(settings: Record<string, unknown>): { bytes: number; reason: string } | undefined;
  /**
   * Bytes per token this engine's sampling holds in its key/value cache for a model with these settings (keys and
   * values of every layer), which the memory check counts for every row of a call; undefined: float32 keys and values
   * (`keyValueBytesPerToken` of the model's shape).
   */
  cacheBytesPerToken?(settings: Record<string, unknown>): { bytes: number; reason: string } | undefined;
  /**
   * Bytes per sampled token this engine's training pass holds beyond the key/value cache (activations kept for the
   * backward pass, logits), a lower bound the memory check adds; with `critic`, a critic of its own trunk (that
   * model) trains beside the policy on this engine, and its pass counts too. `microBatchTokens`: the padded tokens one
   * training run takes at most when `agents.<role>.train.microBatchTokens` is unset (the engine's own bound, which
   * may grow with `budget`, the run's `RunContext.memoryBudget`), so that the activations count for one micro-batch
   * of that many tokens rather than for every row; `microBatchReason`, how the engine chose it. Undefined: not counted.
   */
  trainingBytesPerToken?(
    settings: Record<string, unknown>,
    options: { budget: MemoryBudget; critic?: { model: string } },
  ): { bytes: number; reason: string; microBatchTokens?: number; microBatchReason?: string } | undefined;
  /**
   * Bytes this engine holds to train a model with these settings whatever the batch: its weights, their gradients and
   * the optimizer's state (and any copy of the weights the engine derives), which the memory check adds once per
   * model; with `adapters`, the model is a frozen base under these LoRA adapters (one per agent), trained alone.
   * Undefined: not counted.
   */
  trainingStateBytes?(
    settings: Record<string, unknown>,
    adapters?: ReadonlyArray<{ rank: number; targetModules: readonly string[] }>,
  ): { bytes: number; reason: string } | undefined;
  /**
   * Creates the engine of a model. `purpose: 'reference'`: a frozen model that only scores (a KL penalty's or DPO's
   * reference), which the engine may hold in fewer bits (onnx: float16 weights); default a policy.
   */
  create(options: { modelId: string; settings: Record<string, unknown>; run: RunContext; purpose?: EnginePurpose }): Promise<PolicyBackend>;
  /**
   * Creates a critic (`critic` section): a decoder from `settings.model` with a zero-initialized scalar head, or, with
   * `shareTrunk`, a head on that policy's own trunk (which the value loss does not train). Present exactly when
   * `capabilities` lists `critic`.
   */
  createCritic?(options: {
    criticId: string;
    settings: Record<string, unknown>;
    run: RunContext;
    shareTrunk?: PolicyBackend;
  }): Promise<ValueModel>;
}
export const BackendFactory = createToken<BackendFactory>('BackendFactory', {
  label: 'engine',
  configKey: 'models.<id>.backend',
  named: true,
});

/** `models.<id>.backend`, `.rollout` and `--engine` value: the highest-ranked engine that fits and is available here. */
export const AUTO_BACKEND = 'auto';
