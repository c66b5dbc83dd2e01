import type {
  GenerateRequest,
  GenerateResult,
  PolicyBackend,
  ScoreRequest,
  ScoreResult,
  TrainingSnapshot,
  UpdateRequest,
  UpdateResult,
  WeightTensor,
} from '@drmas/core';
import { DrmasError, type LoraSettings } from '@drmas/core';
import { loadModelWeights, type DecoderConfig, type ModelSource, type Tokenizer } from '@drmas/models';
import type * as OrtModule from 'onnxruntime-node';
import type { CheckpointIO, LoadOptions, SaveOptions } from './checkpoint/CheckpointIO.js';
import { LoraAdapterCheckpoint } from './checkpoint/LoraAdapterCheckpoint.js';
import { ModelCheckpoint } from './checkpoint/ModelCheckpoint.js';
import type { DecoderGraphKind, WeightMode } from './DecoderGraph.js';
import { DecoderSessions } from './DecoderSessions.js';
import {
  describeProvider,
  loadOnnxRuntime,
  ONNXRUNTIME_INSTALL,
  parseProviderRequest,
  resolveProvider,
  type ProviderAvailability,
  type ProviderName,
  type Ort,
  type ProviderRequest,
  type ResolvedProvider,
} from './ExecutionProvider.js';
import type { WeightLayout } from './GraphWeights.js';
import { OnnxRuntimeUnavailableError } from './OnnxBackendErrors.js';
import { OnnxSampler } from './sampling/OnnxSampler.js';
import { OnnxScorer } from './scoring/OnnxScorer.js';
import type { SharedSessions } from './SharedSessions.js';
import type { TrainingSession } from './training/OnnxTrainer.js';
import type { BackwardSegmentsSetting } from './training/LargeModelMemory.js';
import { PolicyTraining } from './training/PolicyTraining.js';
import type { WeightPrecision } from './weights/HalfWeights.js';
import { WeightState } from './weights/WeightState.js';
import { WeightSync } from './weights/WeightSync.js';

type Session = OrtModule.InferenceSession;

export interface OnnxEngineOptions {
  /** Backend name in logs (default `onnx`). */
  name?: string;
  /** Execution provider (default `auto`: CUDA when its binaries are installed, else CPU; `webgpu` only when named). */
  provider?: ProviderRequest;
  /** How weights enter the graphs (default `inputs`; see the README for the measurement behind it). */
  weightMode?: WeightMode;
  /**
   * How the graphs hold the weights (default `defaultWeightLayout`: `shared`, one float32 copy read by every graph,
   * from 512 MiB of weights; `fused`, a copy of the projections stacked per layer beside it, below).
   */
  weightLayout?: WeightLayout;
  /** Where the fallback warning of a named provider that cannot run here goes (default `console.warn`). */
  warn?: (message: string) => void;
  /** Replaces a provider's detection where it answers (tests). */
  detectProvider?: (provider: ProviderName) => Promise<ProviderAvailability> | undefined;
  /** Extra onnxruntime session options (profiling, for instance). */
  sessionOptions?: OrtModule.InferenceSession.SessionOptions;
  /**
   * Sampling and scoring sessions shared with other engines of the same architecture (a run's models, one per agent);
   * used when the weights are inputs (initializers make a graph the engine's own).
   */
  rolloutSessions?: SharedSessions<Session>;
  /** Training sessions shared with other engines of the same architecture. */
  trainingSessions?: SharedSessions<TrainingSession>;
  /** The layers' segments a training run's backward takes (`backwardSegments`; default `auto`). */
  backwardSegments?: BackwardSegmentsSetting;
  /**
   * The run's memory budget in bytes (`RunContext.memoryBudget`): a large model's default micro-batch takes its share
   * (`defaultMicroBatchTokens`); default none, the least default micro-batch.
   */
  memoryBudget?: number;
  /**
   * A LoRA adapter on the weights, which are then a frozen base (shareable with other engines' adapters): sampling
   * and scoring apply it unmerged, `update` trains it alone, `save` / `load` write and read it in PEFT's layout.
   */
  lora?: { settings: LoraSettings; /** Seeds PEFT's init of A (default 0). */ seed?: number };
  /**
   * How the host holds the weights (default `float32`). `float16`: half the bytes, converted once at creation (round
   * to nearest even; a bfloat16 checkpoint's values of magnitude 2^-14 to 65504 exactly), each weight cast to float32
   * in the graph where it is read; the engine is frozen: it samples and scores (a reference model), and refuses
   * `update`, `save`, `load`, snapshots, `syncWeights` and `exportWeights`. Needs weights as inputs and no LoRA.
   */
  weightPrecision?: WeightPrecision;
  /**
   * How `generate` holds its key/value caches (default `float32`). `float16`: half the bytes a sampled token holds
   * (Qwen3-0.6B: 112 KiB instead of 224), each value rounded to nearest even as the graphs output it and read back as
   * float32, for a cast of each layer's past keys and values per decoded token; the sampled tokens' log-probs then
   * differ from `score`'s by that rounding.
   */
  kvCachePrecision?: WeightPrecision;
}

export interface OnnxBackendOptions extends ModelSource, OnnxEngineOptions {}

/**
 * A policy on onnxruntime-node for the tfjs backend's decoders: `generate` and `score` with the tfjs backend's
 * semantics on ONNX graphs built in TypeScript, `update` on an `OnnxTrainer` that trains the engine's own weight
 * buffers (so sampling after an update needs no sync), checkpoints with optimizer state in the tfjs backend's files,
 * and `syncWeights` to take another trainer's weights. Create it with `createOnnxPolicyBackend`.
 *
 * A facade over one piece per job, sharing the engine's `WeightState` and `DecoderSessions`: `OnnxSampler`
 * (`generate`), `OnnxScorer` (`score`), `PolicyTraining` (`update`, snapshots), `ModelCheckpoint` or
 * `LoraAdapterCheckpoint` (`save`, `load`) and `WeightSync` (`syncWeights`).
 */
export class OnnxPolicyBackend implements PolicyBackend {
  readonly name: string;
  readonly runtime: string;
  readonly measuresAgentGradients = true;
  readonly provider: ResolvedProvider;
  private readonly state: WeightState;
  private readonly sessions: DecoderSessions;
  private readonly sampler: OnnxSampler;
  private readonly scorer: OnnxScorer;
  private readonly training: PolicyTraining;
  private readonly weightSync: WeightSync;
  private readonly checkpoint: CheckpointIO;

  private constructor(
    ort: Ort,
    config: DecoderConfig,
    weights: Map<string, WeightTensor>,
    tokenizer: Tokenizer | undefined,
    provider: ResolvedProvider,
    options: OnnxEngineOptions,
  ) {
    this.name = options.name ?? 'onnx';
    this.provider = provider;
    this.runtime = describeProvider(ort, provider, options.sessionOptions?.intraOpNumThreads);
    const state = new WeightState(ort, config, weights, tokenizer, options);
    const sessions = new DecoderSessions(ort, provider, state, {
      engine: this.name,
      sessionOptions: options.sessionOptions,
      shared: options.rolloutSessions,
      kvCachePrecision: options.kvCachePrecision,
    });
    const training = new PolicyTraining(state, sessions, {
      engine: this.name,
      sessionOptions: options.sessionOptions,
      trainingSessions: options.trainingSessions,
      backwardSegments: options.backwardSegments,
      memoryBudget: options.memoryBudget,
    });
    this.state = state;
    this.sessions = sessions;
    this.training = training;
    this.sampler = new OnnxSampler(state, sessions);
    this.scorer = new OnnxScorer(state, sessions);
    this.weightSync = new WeightSync(state, sessions, training);
    const { adapter, lora } = state;
    this.checkpoint =
      adapter && lora
        ? new LoraAdapterCheckpoint(state, training, { settings: lora.settings, adapter })
        : new ModelCheckpoint(state, sessions, training, this.weightSync);
  }

  /** An engine for a decoder given by config and weights (the weights are used in place, not copied). */
  static async create(
    config: DecoderConfig,
    weights: Map<string, WeightTensor>,
    tokenizer: Tokenizer | undefined,
    options: OnnxEngineOptions = {},
  ): Promise<OnnxPolicyBackend> {
    const ort = await loadOnnxRuntime();
    const requested = parseProviderRequest(options.provider ?? 'auto');
    const provider = await resolveProvider(requested, options.warn ?? ((m) => console.warn(m)), options.detectProvider);
    return new OnnxPolicyBackend(ort, config, weights, tokenizer, provider, options);
  }

  get config(): DecoderConfig {
    return this.state.config;
  }

  get vocabSize(): number {
    return this.state.config.vocabSize;
  }

  get maxPositions(): number {
    return this.state.config.maxPositionEmbeddings;
  }

  get tokenizer(): Tokenizer | undefined {
    return this.state.tokenizer;
  }

  get weightMode(): WeightMode {
    return this.state.weightMode;
  }

  get weightLayout(): WeightLayout {
    return this.state.layout;
  }

  get weightPrecision(): WeightPrecision {
    return this.state.precision;
  }

  /** How `generate` holds its key/value caches (`kvCachePrecision`). */
  get kvCachePrecision(): WeightPrecision {
    return this.sessions.kvCachePrecision;
  }

  /** Bytes of the weight buffers this engine holds on the host (`WeightState.heldBytes`; a shared LoRA base counted). */
  get weightBytes(): number {
    return this.state.heldBytes;
  }

  /** Refuses a use that changes or reads out float32 weights on a `float16` engine. */
  private ensureTrainable(what: string): void {
    this.sessions.ensureLive();
    if (this.state.precision === 'float32') return;
    throw new DrmasError('INVALID_ARGUMENT', `engine ${this.name} holds its weights in float16 and is frozen: it cannot ${what}`, {
      key: 'weightPrecision',
      hint: "use it to sample and score only (a reference model), or create it with weightPrecision 'float32'",
    });
  }

  /** Stop ids used when a request gives none: config.json's eos ids and the tokenizer's eos. */
  get defaultStopTokenIds(): number[] {
    return this.sampler.defaultStopTokenIds();
  }

  /** The session of one graph, built on first use. */
  session(kind: DecoderGraphKind): Promise<Session> {
    return this.sessions.session(kind);
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    this.sessions.ensureLive();
    return this.sampler.generate(request);
  }

  /**
   * Teacher-forced log-probs (and entropy) of each response token of the view's rows, each at its row's temperature,
   * in row chunks of bounded logits and attention size (`scoreChunks`).
   */
  async score(request: ScoreRequest): Promise<ScoreResult> {
    this.sessions.ensureLive();
    return this.scorer.score(request);
  }

  /**
   * The decoder a critic with `shareTrunk` reads: the config and the Hugging Face weights as they are now (updates
   * write them in place, a load may replace them: ask on every use); undefined under LoRA (base plus adapter).
   */
  sharedTrunk(): { config: DecoderConfig; weights: Map<string, WeightTensor> } | undefined {
    this.sessions.ensureLive();
    return this.state.adapter || this.state.precision === 'float16'
      ? undefined
      : { config: this.state.config, weights: this.state.weights };
  }

  /** Names of the trained parameters, as in the checkpoint (the adapter's under LoRA). */
  parameterNames(): string[] {
    return [...this.state.trained.keys()];
  }

  /** One optimizer step on the engine's own weight buffers (`PolicyTraining.update`). */
  async update(request: UpdateRequest): Promise<UpdateResult> {
    this.ensureTrainable('train (update)');
    return this.training.update(request);
  }

  /** Writes a Hugging Face checkpoint of the current weights, with AdamW's state (the tfjs backend's files) unless `optimizer: false`. */
  async save(dir: string, options: SaveOptions = {}): Promise<void> {
    this.ensureTrainable('save a checkpoint');
    return this.checkpoint.save(dir, options);
  }

  /**
   * Takes the weights (and tokenizer) of a checkpoint, or under LoRA the adapter; optimizer state (written by either
   * backend) is loaded when asked, or by default when the folder has it; otherwise the optimizer restarts.
   */
  async load(dir: string, options: LoadOptions = {}): Promise<void> {
    this.ensureTrainable('load a checkpoint');
    return this.checkpoint.load(dir, options);
  }

  async snapshotTraining(): Promise<TrainingSnapshot> {
    this.ensureTrainable('snapshot its training state');
    return this.training.snapshot();
  }

  async restoreTraining(snapshot: TrainingSnapshot): Promise<void> {
    this.ensureTrainable('restore a training snapshot');
    return this.training.restore(snapshot);
  }

  async exportWeights(): Promise<Map<string, WeightTensor>> {
    this.ensureTrainable('export float32 weights');
    return this.state.export();
  }

  /**
   * Takes the trainer's current weights. With weights as graph inputs (the default) this swaps the host buffers
   * the sessions read on their next run: no file, no session rebuild.
   */
  async syncWeights(from: PolicyBackend): Promise<void> {
    this.ensureTrainable('take weights (syncWeights)');
    if (from === this) return;
    await this.weightSync.syncFrom(from);
  }

  dispose(): void {
    if (this.sessions.disposed) return;
    this.sessions.dispose();
    void this.training.release().catch(() => undefined);
    this.state.clear();
  }
}

/** Loads `tiny` / `small` (same weights as the tfjs backend for the same seed) or a checkpoint folder. */
export async function createOnnxPolicyBackend(options: OnnxBackendOptions): Promise<OnnxPolicyBackend> {
  const { config, weights, tokenizer } = await loadModelWeights(options);
  return OnnxPolicyBackend.create(config, weights, tokenizer, options);
}

/**
 * What `drmas generate|score --engine onnx` opens: `createOnnxPolicyBackend`, where a missing onnxruntime-node is a
 * user error naming `--engine`, with the line that installs it.
 */
export async function createPolicyBackend(options: OnnxBackendOptions): Promise<OnnxPolicyBackend> {
  try {
    return await createOnnxPolicyBackend(options);
  } catch (cause) {
    if (!(cause instanceof OnnxRuntimeUnavailableError)) throw cause;
    throw new DrmasError('INVALID_ARGUMENT', `--engine onnx needs onnxruntime-node: ${cause.message}`, {
      key: '--engine',
      cause,
      hint: `install it (${ONNXRUNTIME_INSTALL}), or use --engine tfjs`,
    });
  }
}
