import type { LoraSettings } from '@drmas/core';
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
import { DrmasError } from '@drmas/core';
import {
  configJsonFor,
  distinctSequences,
  expectedWeightShapes,
  leftPad,
  loadModelWeights,
  hasAdamWState,
  initLoraAdapter,
  loadLoraAdapter,
  loraAdapterFiles,
  logProbAtTemperature,
  promptResponseLayout,
  rotaryInverseFrequencies,
  rotaryTables,
  sampleToken,
  saveCheckpoint,
  topLogProbs,
  rowStreams,
  SeededRandom,
  type CheckpointFileContents,
  type DecoderConfig,
  type ModelSource,
  type SamplingSettings,
  type Tokenizer,
} from '@drmas/models';
import type * as OrtModule from 'onnxruntime-node';
import { buildDecoderGraph, GraphNames, type DecoderGraphKind, type WeightMode } from './DecoderGraph.js';
import { forwardFeeds, MASKED, scoreFeeds, type Feeds } from './DecoderFeeds.js';
import { defaultWeightLayout, graphWeights, refreshGraphWeights, type WeightLayout } from './GraphWeights.js';
import {
  describeProvider,
  loadOnnxRuntime,
  ONNXRUNTIME_INSTALL,
  parseProviderRequest,
  resolveProvider,
  trainingProvider,
  sessionOptions,
  type ProviderAvailability,
  type ProviderName,
  type Ort,
  type ProviderRequest,
  type ResolvedProvider,
} from './ExecutionProvider.js';
import { OnnxBackendDisposedError, OnnxRequestError, OnnxRuntimeUnavailableError, OnnxWeightMismatchError } from './OnnxBackendErrors.js';
import { scoreChunks } from './ScoreChunks.js';
import { HostAdamW, type HostAdamWState } from './training/HostAdamW.js';
import { OnnxTrainer, type TrainingSession } from './training/OnnxTrainer.js';
import { largeModelSessionOptions } from './training/LargeModelMemory.js';
import { SharedSessions } from './SharedSessions.js';

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
   * from 512 MiB of weights; `fused`, a derived transposed and fused copy beside it, below).
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
  /**
   * A LoRA adapter on the weights, which are then a frozen base (shareable with other engines' adapters): sampling
   * and scoring apply it unmerged, `update` trains it alone, `save` / `load` write and read it in PEFT's layout.
   */
  lora?: { settings: LoraSettings; /** Seeds PEFT's init of A (default 0). */ seed?: number };
}

export interface OnnxBackendOptions extends ModelSource, OnnxEngineOptions {}

/** Weights and AdamW state copied to host memory (about three float32 copies of the model). */
interface OnnxTrainingSnapshot extends TrainingSnapshot {
  readonly weights: Map<string, Float32Array>;
  readonly optimizer: HostAdamWState;
  readonly owner: OnnxPolicyBackend;
}

/**
 * A policy on onnxruntime-node for the tfjs backend's decoders: `generate` and `score` with the tfjs backend's
 * semantics on ONNX graphs built in TypeScript, `update` on an `OnnxTrainer` that trains the engine's own weight
 * buffers (so sampling after an update needs no sync), checkpoints with optimizer state in the tfjs backend's files,
 * and `syncWeights` to take another trainer's weights. Create it with `createOnnxPolicyBackend`.
 */
export class OnnxPolicyBackend implements PolicyBackend {
  readonly name: string;
  readonly runtime: string;
  readonly measuresAgentGradients = true;
  readonly provider: ResolvedProvider;
  private configRef: DecoderConfig;
  /** Hugging Face tensors (what `exportWeights` and `save` give). */
  private weights: Map<string, WeightTensor>;
  /** The graphs' weights: derived from `weights` (`graphWeights`) under the `fused` layout, `weights` itself under `shared`. */
  private graphWeightsRef: Map<string, WeightTensor>;
  private layout: WeightLayout;
  private weightFeeds: Feeds = {};
  private tokenizerRef: Tokenizer | undefined;
  private invFreq: Float64Array;
  /** The sampling and scoring sessions: shared with a run's other engines, or the engine's own. */
  private readonly sessions: SharedSessions<Session>;
  private usesSessions = false;
  /** What the sessions depend on besides the graph's kind (`sessionKeyOf`). */
  private sessionKey: string;
  /** Made on the first update (or optimizer-state load); trains `weights` in place. */
  private trainerRef: Promise<OnnxTrainer> | undefined;
  private disposed = false;
  /** The LoRA adapter (PEFT names without prefix), trained in place; the weights are then never changed. */
  private readonly adapter: Map<string, WeightTensor> | undefined;

  private constructor(
    private readonly ort: Ort,
    config: DecoderConfig,
    weights: Map<string, WeightTensor>,
    tokenizer: Tokenizer | undefined,
    provider: ResolvedProvider,
    private readonly options: OnnxEngineOptions,
  ) {
    this.name = options.name ?? 'onnx';
    this.provider = provider;
    this.runtime = describeProvider(ort, provider, options.sessionOptions?.intraOpNumThreads);
    this.configRef = config;
    this.weights = checkedWeights(config, weights);
    this.layout = options.weightLayout ?? defaultWeightLayout(config);
    this.graphWeightsRef = this.graphWeightsOf(this.weights);
    this.tokenizerRef = tokenizer;
    this.invFreq = rotaryInverseFrequencies(config);
    const lora = options.lora;
    this.adapter = lora && initLoraAdapter(config, lora.settings, new SeededRandom(lora.seed ?? 0));
    this.weightFeeds = this.makeWeightFeeds();
    this.sessions = this.weightMode === 'inputs' && options.rolloutSessions ? options.rolloutSessions : rolloutSessionPool();
    this.sessionKey = this.sessionKeyOf(config);
  }

  /** What the graphs read: `weights` themselves, or their derived copy under the `fused` layout. */
  private graphWeightsOf(weights: Map<string, WeightTensor>): Map<string, WeightTensor> {
    return this.layout === 'fused' ? graphWeights(this.configRef, weights) : weights;
  }

  /** The graphs' inputs and options: everything a session depends on but the graph's kind and the weights' values. */
  private sessionKeyOf(config: DecoderConfig): string {
    const { weightMode, provider, options, layout } = this;
    return JSON.stringify([
      graphShape(config),
      weightMode,
      layout,
      options.lora?.settings ?? null,
      provider.provider,
      options.sessionOptions ?? null,
    ]);
  }

  /** The tensors `update` trains: the LoRA adapter's, or the weights. */
  private get trained(): Map<string, WeightTensor> {
    return this.adapter ?? this.weights;
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
    return this.configRef;
  }

  get vocabSize(): number {
    return this.configRef.vocabSize;
  }

  get maxPositions(): number {
    return this.configRef.maxPositionEmbeddings;
  }

  get tokenizer(): Tokenizer | undefined {
    return this.tokenizerRef;
  }

  get weightMode(): WeightMode {
    return this.options.weightMode ?? 'inputs';
  }

  get weightLayout(): WeightLayout {
    return this.layout;
  }

  /** Stop ids used when a request gives none: config.json's eos ids and the tokenizer's eos. */
  get defaultStopTokenIds(): number[] {
    const ids = new Set(this.configRef.eosTokenIds);
    if (this.tokenizerRef?.eosTokenId !== undefined) ids.add(this.tokenizerRef.eosTokenId);
    return [...ids];
  }

  /** The session of one graph, built on first use. */
  session(kind: DecoderGraphKind): Promise<Session> {
    this.ensureLive();
    if (!this.usesSessions) {
      this.sessions.retain();
      this.usesSessions = true;
    }
    return this.sessions.get(kind, this.sessionKey, () => {
      const model = buildDecoderGraph(
        this.configRef,
        kind,
        this.graphWeightsRef,
        this.weightMode,
        this.options.lora?.settings,
        this.layout,
      );
      const options = largeModelSessionOptions(this.configRef, this.options.sessionOptions);
      return this.ort.InferenceSession.create(model, sessionOptions(this.provider.provider, options));
    });
  }

  private async run(kind: DecoderGraphKind, feeds: Feeds): Promise<OrtModule.InferenceSession.ReturnType> {
    const session = await this.session(kind);
    return session.run({ ...this.weightFeeds, ...feeds });
  }

  private tensor(data: Float32Array | BigInt64Array, dims: number[]): OrtModule.Tensor {
    return new this.ort.Tensor(data instanceof Float32Array ? 'float32' : 'int64', data, dims);
  }

  private makeWeightFeeds(): Feeds {
    const feeds: Feeds = {};
    if (this.weightMode === 'inputs') for (const [name, w] of this.graphWeightsRef) feeds[name] = this.tensor(w.data, w.shape);
    // The adapter is always an input: its buffers are trained in place and read by the next run.
    for (const [name, w] of this.adapter ?? []) feeds[name] = this.tensor(w.data, w.shape);
    return feeds;
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    this.ensureLive();
    const c = this.configRef;
    const rows = request.prompts.length;
    const settings: SamplingSettings = { temperature: request.temperature ?? 1, topK: request.topK ?? 0, topP: request.topP ?? 1 };
    const stopStrings = request.stopStrings ?? [];
    const tokenizer = this.tokenizerRef;
    if (stopStrings.length > 0 && !tokenizer) {
      throw new OnnxRequestError(
        'stop strings need a tokenizer to decode the output; this model has none',
        'stop on token ids instead, or give the checkpoint folder a tokenizer.json',
      );
    }
    request.prompts.forEach((p, r) => {
      if (p.length === 0) throw new OnnxRequestError(`prompt ${r} is empty; generation needs at least one prompt token`);
    });
    const seed = request.seed ?? Math.floor(Math.random() * 2 ** 31);
    if (request.rowKeys && request.rowKeys.length !== rows) {
      throw new OnnxRequestError(`rowKeys has ${request.rowKeys.length} keys for ${rows} prompts`, 'give one key per prompt, or none');
    }
    if (request.rowSeeds && request.rowSeeds.length !== rows) {
      throw new OnnxRequestError(`rowSeeds has ${request.rowSeeds.length} seeds for ${rows} prompts`, 'give one seed per prompt, or none');
    }
    const rngs = rowStreams(seed, rows, request.rowKeys, request.rowSeeds);
    const stopIds = new Set(request.stopTokenIds ?? this.defaultStopTokenIds);
    const tokenIds: number[][] = Array.from({ length: rows }, () => []);
    const logProbs: number[][] = Array.from({ length: rows }, () => []);
    const finishReasons: Array<'stop' | 'length'> = new Array<'stop' | 'length'>(rows).fill('length');
    const maxNew = request.maxNewTokens;
    if (rows === 0 || maxNew <= 0) return { tokenIds, logProbs, finishReasons };
    const longestStop = Math.max(0, ...stopStrings.map((s) => s.length));
    const hitsStopString = (ids: number[]): boolean => {
      if (longestStop === 0 || !tokenizer) return false;
      // A stop string not present before this token can only span the last few tokens (at most 4 bytes per char).
      const text = tokenizer.decode(ids.slice(-(4 * longestStop + 4)));
      return stopStrings.some((s) => s.length > 0 && text.includes(s));
    };

    const v = c.vocabSize;
    const d = c.headDim;
    const kv = c.numKvHeads;
    const layers = c.numLayers;
    // The samples of one prompt share its prefill: each distinct prompt runs once, its rows get copies of its keys,
    // values and first log-probs. The distinct prompts are as long as the longest of all, so the columns (and the
    // cache slots every later step attends over) are those of the whole batch.
    const { distinct, of } = distinctSequences(request.prompts);
    const batch = leftPad(distinct);
    const columns = batch.columns;
    // Cache slots: the prompt columns plus every generated token but the last.
    const slots = columns + maxNew - 1;
    const keyBlock = kv * d * slots;
    const keyCache = Array.from({ length: layers }, () => new Float32Array(rows * keyBlock));
    const valueCache = Array.from({ length: layers }, () => new Float32Array(rows * keyBlock));
    const valid = new Uint8Array(rows * slots);

    // Prefill: every column of the distinct prompts at once.
    const prefill = await this.run('prefill', forwardFeeds(this.ort, this.configRef, this.invFreq, { ...batch, columns }));
    for (let l = 0; l < layers; l++) {
      const keys = prefill[GraphNames.key(l)]!.data as Float32Array;
      const values = prefill[GraphNames.value(l)]!.data as Float32Array;
      const kc = keyCache[l]!;
      const vc = valueCache[l]!;
      for (let r = 0; r < rows; r++) {
        const u = of[r]!;
        for (let i = 0; i < kv * d; i++) {
          const from = (u * kv * d + i) * columns;
          kc.set(keys.subarray(from, from + columns), (r * kv * d + i) * slots);
        }
        for (let i = 0; i < kv; i++) {
          const from = (u * kv + i) * columns * d;
          vc.set(values.subarray(from, from + columns * d), (r * kv + i) * slots * d);
        }
      }
    }
    const lengths = Array.from(of, (u) => batch.lengths[u]!);
    for (let r = 0; r < rows; r++) valid.set(batch.valid.subarray(of[r]! * columns, (of[r]! + 1) * columns), r * slots);
    const distinctLogp = prefill[GraphNames.logProbs]!.data as Float32Array;
    let logp = distinctLogp;
    if (distinct.length < rows) {
      logp = new Float32Array(rows * v);
      for (let r = 0; r < rows; r++) logp.set(distinctLogp.subarray(of[r]! * v, (of[r]! + 1) * v), r * v);
    }
    let filled = columns;
    let active = Array.from({ length: rows }, (_, r) => r);

    for (let step = 0; ; step++) {
      const n = active.length;
      const still: number[] = [];
      for (let i = 0; i < n; i++) {
        const r = active[i]!;
        const row = logp.subarray(i * v, (i + 1) * v);
        const token = sampleToken(row, settings, rngs[r]!);
        const ids = tokenIds[r]!;
        ids.push(token);
        const logProb = logProbAtTemperature(row, token, settings.temperature);
        logProbs[r]!.push(logProb);
        const top = request.topLogProbs ? topLogProbs(row, request.topLogProbs, settings.temperature) : undefined;
        request.onToken?.(r, token, logProb, top);
        if (stopIds.has(token) || hitsStopString(ids)) finishReasons[r] = 'stop';
        else still.push(i);
      }
      if (step + 1 >= maxNew || still.length === 0) break;

      // Finished rows leave the batch: the caches of the rows still running move up (rows are the outer axis,
      // so the first `m` rows of each cache are one contiguous block the next run reads in place).
      const m = still.length;
      still.forEach((i, j) => {
        if (i === j) return;
        for (let l = 0; l < layers; l++) {
          keyCache[l]!.copyWithin(j * keyBlock, i * keyBlock, (i + 1) * keyBlock);
          valueCache[l]!.copyWithin(j * keyBlock, i * keyBlock, (i + 1) * keyBlock);
        }
        valid.copyWithin(j * slots, i * slots, (i + 1) * slots);
      });
      active = still.map((i) => active[i]!);

      const ids = new BigInt64Array(m);
      const positions = new Int32Array(m);
      const bias = new Float32Array(m * (slots + 1));
      for (let j = 0; j < m; j++) {
        const r = active[j]!;
        // Every active row has sampled at least one token.
        const generated = tokenIds[r]!;
        ids[j] = BigInt(generated[generated.length - 1]!);
        positions[j] = lengths[r]! + generated.length - 1;
        for (let t = 0; t < slots; t++) if (valid[j * slots + t] === 0) bias[j * (slots + 1) + t] = MASKED;
      }
      const { cos, sinSigned } = rotaryTables(this.invFreq, positions);
      const feeds: Feeds = {
        [GraphNames.inputIds]: this.tensor(ids, [m, 1]),
        [GraphNames.ropeCos]: this.tensor(cos, [m, 1, 1, d]),
        [GraphNames.ropeSin]: this.tensor(sinSigned, [m, 1, 1, d]),
        [GraphNames.attentionBias]: this.tensor(bias, [m, 1, 1, slots + 1]),
      };
      for (let l = 0; l < layers; l++) {
        feeds[GraphNames.pastKey(l)] = this.tensor(keyCache[l]!.subarray(0, m * keyBlock), [m, kv, d, slots]);
        feeds[GraphNames.pastValue(l)] = this.tensor(valueCache[l]!.subarray(0, m * keyBlock), [m, kv, slots, d]);
      }
      const out = await this.run('decode', feeds);
      for (let l = 0; l < layers; l++) {
        const key = out[GraphNames.key(l)]!.data as Float32Array;
        const value = out[GraphNames.value(l)]!.data as Float32Array;
        const kc = keyCache[l]!;
        const vc = valueCache[l]!;
        for (let i = 0; i < m * kv * d; i++) kc[i * slots + filled] = key[i]!;
        for (let i = 0; i < m * kv; i++) {
          const at = (i * slots + filled) * d;
          for (let e = 0; e < d; e++) vc[at + e] = value[i * d + e]!;
        }
      }
      for (let j = 0; j < m; j++) valid[j * slots + filled] = 1;
      filled++;
      logp = out[GraphNames.logProbs]!.data as Float32Array;
    }
    return { tokenIds, logProbs, finishReasons };
  }

  /**
   * Teacher-forced log-probs (and entropy) of each response token of the view's rows, each at its row's temperature,
   * in row chunks of bounded logits and attention size (`scoreChunks`).
   */
  async score(request: ScoreRequest): Promise<ScoreResult> {
    this.ensureLive();
    const { batch, rows: viewRows } = request.batch;
    const R = batch.responseLength;
    const rows = viewRows.length;
    const logProbs = new Float32Array(rows * R);
    const entropy = request.withEntropy ? new Float32Array(rows * R) : undefined;
    for (const [start, end] of scoreChunks(request.batch, this.configRef)) {
      const chunk = viewRows.subarray(start, end);
      const responses = Array.from(chunk, (r) => batch.responseIds.subarray(r * R, r * R + batch.responseLengths[r]!));
      const layout = promptResponseLayout(
        Array.from(chunk, (r) => batch.promptIds[r]!),
        responses,
      );
      const r = layout.responseColumns;
      const feeds = scoreFeeds(
        this.ort,
        this.configRef,
        this.invFreq,
        layout,
        Array.from(chunk, (row) => batch.temperatures[row]),
      );
      const out = await this.run('score', feeds);
      const lp = out[GraphNames.logProbs]!.data as Float32Array;
      const ent = out[GraphNames.entropy]!.data as Float32Array;
      responses.forEach((response, i) => {
        const at = (start + i) * R;
        logProbs.set(lp.subarray(i * r, i * r + response.length), at);
        entropy?.set(ent.subarray(i * r, i * r + response.length), at);
      });
    }
    return entropy ? { logProbs, entropy } : { logProbs };
  }

  /**
   * The decoder a critic with `shareTrunk` reads: the config and the Hugging Face weights as they are now (updates
   * write them in place, a load may replace them: ask on every use); undefined under LoRA (base plus adapter).
   */
  sharedTrunk(): { config: DecoderConfig; weights: Map<string, WeightTensor> } | undefined {
    this.ensureLive();
    return this.adapter ? undefined : { config: this.configRef, weights: this.weights };
  }

  /** Names of the trained parameters, as in the checkpoint (the adapter's under LoRA). */
  parameterNames(): string[] {
    return [...this.trained.keys()];
  }

  /**
   * One optimizer step (`OnnxTrainer.update`: micro-batches, clipping, the spike guard's `acceptGradNorm`, AdamW with
   * param groups) on the engine's own weight buffers; the derived graph weights are then rewritten in place, so the
   * next `generate` / `score` samples the updated policy.
   */
  async update(request: UpdateRequest): Promise<UpdateResult> {
    this.ensureLive();
    const result = await (await this.trainer()).update(request);
    if (!result.skipped) await this.weightsChanged();
    return result;
  }

  /** The trainer, made on first use over `weights` (shared, not copied). */
  private trainer(): Promise<OnnxTrainer> {
    const lora = this.options.lora &&
      this.adapter && { settings: this.options.lora.settings, adapter: this.adapter, seed: this.options.lora.seed };
    this.trainerRef ??= OnnxTrainer.create(this.configRef, this.weights, this.options.sessionOptions, {
      adopt: true,
      lora,
      provider: trainingProvider(this.provider.provider),
      sessions: this.options.trainingSessions,
      layout: this.layout,
    });
    return this.trainerRef;
  }

  /** After `weights` changed in place: the derived graph weights follow (sessions rebuilt when weights are initializers). */
  private async weightsChanged(): Promise<void> {
    // An adapter's buffers are fed in place; the frozen base did not change.
    if (this.adapter) return;
    if (this.layout === 'fused') refreshGraphWeights(this.configRef, this.weights, this.graphWeightsRef);
    if (this.weightMode === 'initializers') await this.releaseSessions();
  }

  /** Writes a Hugging Face checkpoint of the current weights, with AdamW's state (the tfjs backend's files) unless `optimizer: false`. */
  async save(dir: string, options: { optimizer?: boolean; dtype?: 'float32' | 'bfloat16' } = {}): Promise<void> {
    this.ensureLive();
    const bf16 = options.dtype === 'bfloat16';
    let extraFiles: Record<string, CheckpointFileContents> | undefined;
    if (options.optimizer ?? true) {
      const trainer = this.trainerRef && (await this.trainerRef);
      extraFiles = (trainer?.optimizer ?? new HostAdamW()).serialize(this.trained, trainer?.settings);
    }
    if (this.adapter) {
      // A PEFT adapter folder (plus config.json, the tokenizer and the adapter's optimizer state); the frozen base
      // stays where it was loaded from.
      await saveCheckpoint(dir, {
        config: configJsonFor(this.configRef),
        tensors: new Map(),
        tokenizer: this.tokenizerRef,
        extraFiles: { ...extraFiles, ...loraAdapterFiles('', this.options.lora!.settings, this.adapter) },
      });
      return;
    }
    await saveCheckpoint(dir, {
      config: { ...configJsonFor(this.configRef), ...(bf16 ? { torch_dtype: 'bfloat16' } : {}) },
      tensors: this.weights,
      dtype: bf16 ? 'BF16' : 'F32',
      tokenizer: this.tokenizerRef,
      extraFiles,
    });
  }

  /**
   * Takes the weights (and tokenizer) of a checkpoint; graphs are rebuilt only when the model's shape changed.
   * Optimizer state (written by either backend) is loaded when asked, or by default when the folder has it;
   * otherwise the optimizer restarts.
   */
  async load(dir: string, options: { optimizer?: boolean } = {}): Promise<void> {
    this.ensureLive();
    if (this.adapter) return this.loadAdapter(dir, options);
    const loaded = await loadModelWeights({ model: dir });
    if (loaded.tokenizer) this.tokenizerRef = loaded.tokenizer;
    if (JSON.stringify(graphShape(loaded.config)) !== JSON.stringify(graphShape(this.configRef))) {
      await this.releaseSessions();
      await this.releaseTrainer();
      this.configRef = loaded.config;
      this.layout = this.options.weightLayout ?? defaultWeightLayout(loaded.config);
      this.sessionKey = this.sessionKeyOf(loaded.config);
      this.invFreq = rotaryInverseFrequencies(loaded.config);
    }
    await this.replaceWeights(loaded.weights);
    const hasState = await hasAdamWState(dir);
    if (options.optimizer ?? hasState) await (await this.trainer()).optimizer.load(dir, this.weights);
    else if (this.trainerRef) (await this.trainerRef).optimizer.reset();
  }

  /** Under LoRA: the adapter saved in `dir` (PEFT's layout, the settings this engine was made with) and its optimizer state. */
  private async loadAdapter(dir: string, options: { optimizer?: boolean }): Promise<void> {
    const { settings, tensors } = await loadLoraAdapter(dir, this.configRef);
    const own = this.options.lora!.settings;
    const same =
      settings.rank === own.rank &&
      settings.alpha === own.alpha &&
      settings.dropout === own.dropout &&
      settings.targetModules.join() === own.targetModules.join();
    if (!same) {
      const text = (s: LoraSettings) =>
        `r=${s.rank}, lora_alpha=${s.alpha}, lora_dropout=${s.dropout}, target_modules=${s.targetModules.join(',')}`;
      throw new DrmasError(
        'CHECKPOINT_INVALID',
        `this LoRA adapter was saved with other settings (${text(settings)}) than this agent's lora (${text(own)})`,
        {
          file: dir,
          hint: "give the agent's lora the adapter's settings",
        },
      );
    }
    for (const [name, t] of tensors) this.adapter!.get(name)!.data.set(t.data);
    const hasState = await hasAdamWState(dir);
    if (options.optimizer ?? hasState) await (await this.trainer()).optimizer.load(dir, this.adapter!);
    else if (this.trainerRef) (await this.trainerRef).optimizer.reset();
  }

  async snapshotTraining(): Promise<TrainingSnapshot> {
    this.ensureLive();
    const trainer = await this.trainer();
    const snapshot: OnnxTrainingSnapshot = {
      engine: this.name,
      weights: new Map([...this.trained].map(([name, w]) => [name, w.data.slice()])),
      optimizer: trainer.optimizer.snapshot(),
      owner: this,
    };
    return snapshot;
  }

  async restoreTraining(snapshot: TrainingSnapshot): Promise<void> {
    this.ensureLive();
    const own = snapshot as Partial<OnnxTrainingSnapshot>;
    if (own.owner !== this || !own.weights || !own.optimizer) {
      throw new Error(`policy backend '${this.name}' was handed a training snapshot it did not make`);
    }
    for (const [name, data] of own.weights) this.trained.get(name)!.data.set(data);
    (await this.trainer()).optimizer.restore(own.optimizer);
    await this.weightsChanged();
  }

  async exportWeights(): Promise<Map<string, WeightTensor>> {
    this.ensureLive();
    const out = new Map<string, WeightTensor>();
    for (const [name, w] of this.weights) out.set(name, { shape: [...w.shape], data: w.data.slice() });
    return out;
  }

  /**
   * Takes the trainer's current weights. With weights as graph inputs (the default) this swaps the host buffers
   * the sessions read on their next run: no file, no session rebuild.
   */
  async syncWeights(from: PolicyBackend): Promise<void> {
    this.ensureLive();
    if (from === this) return;
    await this.replaceWeights(await from.exportWeights());
  }

  /**
   * New weight values. Once a trainer shares `weights`, they are copied into its buffers (it keeps training them, with
   * its optimizer state, as the tfjs backend's `assignTensors`); before, the engine takes `weights` in place.
   */
  private async replaceWeights(weights: Map<string, WeightTensor>): Promise<void> {
    const checked = checkedWeights(this.configRef, weights);
    if (this.trainerRef) {
      for (const [name, w] of checked) this.weights.get(name)!.data.set(w.data);
      await this.weightsChanged();
      return;
    }
    this.weights = checked;
    this.graphWeightsRef = this.graphWeightsOf(this.weights);
    this.weightFeeds = this.makeWeightFeeds();
    if (this.weightMode === 'initializers') await this.releaseSessions();
  }

  private async releaseTrainer(): Promise<void> {
    const pending = this.trainerRef;
    this.trainerRef = undefined;
    if (pending) await (await pending).release();
  }

  /** Lets go of the sessions (released once no engine sharing them uses them). */
  private async releaseSessions(): Promise<void> {
    if (!this.usesSessions) return;
    this.usesSessions = false;
    await this.sessions.release();
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    void this.releaseSessions().catch(() => undefined);
    void this.releaseTrainer().catch(() => undefined);
    this.weights = new Map();
    this.graphWeightsRef = new Map();
    this.weightFeeds = {};
  }

  private ensureLive(): void {
    if (this.disposed) throw new OnnxBackendDisposedError(this.name);
  }
}

/** A pool of sampling and scoring sessions for a run's engines of one architecture to share. */
export function rolloutSessionPool(): SharedSessions<Session> {
  return new SharedSessions((s) => s.release());
}

/** What the graphs are specialised on (everything but the weights' values). */
function graphShape(c: DecoderConfig): unknown[] {
  return [
    c.architecture,
    c.vocabSize,
    c.hiddenSize,
    c.intermediateSize,
    c.numLayers,
    c.numHeads,
    c.numKvHeads,
    c.headDim,
    c.rmsNormEps,
    c.tieWordEmbeddings,
    c.qkvBias,
    c.outputBias,
    c.mlpBias,
    c.qkNorm,
  ];
}

/** The decoder's tensors from `weights`, each checked for presence and shape; extra tensors are ignored. */
function checkedWeights(config: DecoderConfig, weights: Map<string, WeightTensor>): Map<string, WeightTensor> {
  const out = new Map<string, WeightTensor>();
  for (const [name, shape] of expectedWeightShapes(config)) {
    const w = weights.get(name);
    if (!w) throw new OnnxWeightMismatchError(`tensor ${name} is missing`);
    if (w.shape.length !== shape.length || w.shape.some((x, i) => x !== shape[i])) {
      throw new OnnxWeightMismatchError(`tensor ${name} has shape [${w.shape.join(', ')}], expected [${shape.join(', ')}]`);
    }
    if (!(w.data instanceof Float32Array) || w.data.length !== shape.reduce((a, b) => a * b, 1)) {
      throw new OnnxWeightMismatchError(`tensor ${name} must be a float32 array of ${shape.reduce((a, b) => a * b, 1)} values`);
    }
    // Only shape and data: a loader's `dtype` (BF16 of the checkpoint read) would make `save` round the trained weights.
    out.set(name, { shape: w.shape, data: w.data });
  }
  return out;
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
