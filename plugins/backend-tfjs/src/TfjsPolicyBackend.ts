import { DrmasError, longestResponse } from '@drmas/core';
import type {
  BatchView,
  GenerateRequest,
  GenerateResult,
  PolicyBackend,
  ScoreRequest,
  ScoreResult,
  TextCodec,
  TrainingSnapshot,
  UpdateRequest,
  UpdateResult,
  WeightTensor,
} from '@drmas/core';
import { hasAdamWState, loadModelWeights, Tokenizer, type ArchitectureName } from '@drmas/models';
import { generateInChunks } from './generation/generateTokens.js';
import { scoreTokens } from './generation/scoreTokens.js';
import { DecoderModel } from './model/DecoderModel.js';
import { loadDecoderModel, saveDecoderModel } from './model/modelCheckpoint.js';
import { selectRuntime } from './runtime/RuntimeSelector.js';
import { wasmTrapError } from './runtime/wasmTrap.js';
import type { AdamWSnapshot } from './training/AdamW.js';
import { PolicyTrainer } from './training/PolicyTrainer.js';

export interface TfjsBackendOptions {
  /** `tiny` / `small` (built-in, freshly initialised) or a Hugging Face checkpoint folder. */
  model: string;
  /** Architecture of a built-in model (default Qwen2ForCausalLM); ignored for checkpoints. */
  architecture?: ArchitectureName;
  /** Initialisation seed of a built-in model (default 0). */
  seed?: number;
  /** `auto` (default) or a runtime name: tfjs-node-gpu, tfjs-node, wasm, cpu. */
  runtime?: string;
  /** Backend name in logs (default `tfjs`). */
  name?: string;
}

/** Weights and AdamW state copied to host memory (about three float32 copies of the model). */
interface TfjsTrainingSnapshot extends TrainingSnapshot {
  readonly weights: Map<string, WeightTensor>;
  readonly optimizer: AdamWSnapshot;
  readonly owner: TfjsPolicyBackend;
}

/** The backend was used after `dispose()`: a bug of the caller, not something a user can fix. */
export class BackendDisposedError extends Error {
  constructor(name: string) {
    super(`policy backend '${name}' was disposed; create a new one`);
    this.name = 'BackendDisposedError';
  }
}

/**
 * A policy on tfjs: one decoder and one optimizer per instance (several instances in a process are independent).
 * Create it with `createTfjsPolicyBackend`.
 */
export class TfjsPolicyBackend implements PolicyBackend {
  readonly name: string;
  readonly runtime: string;
  readonly measuresAgentGradients = true;
  private modelRef: DecoderModel;
  private trainerRef: PolicyTrainer;
  private tokenizerRef: Tokenizer | undefined;
  private disposed = false;

  constructor(name: string, runtime: string, model: DecoderModel, tokenizer: Tokenizer | undefined) {
    this.name = name;
    this.runtime = runtime;
    this.modelRef = model;
    this.tokenizerRef = tokenizer;
    this.trainerRef = new PolicyTrainer(model);
  }

  get model(): DecoderModel {
    this.ensureLive();
    return this.modelRef;
  }

  /** The checkpoint's tokenizer as the framework sees it. */
  get vocabSize(): number {
    return this.model.config.vocabSize;
  }

  get maxPositions(): number {
    return this.model.config.maxPositionEmbeddings;
  }

  get tokenizer(): TextCodec | undefined {
    return this.tokenizerRef && textCodecOf(this.tokenizerRef);
  }

  /** The full tokenizer (streaming decoder, special tokens, save). */
  get hfTokenizer(): Tokenizer | undefined {
    return this.tokenizerRef;
  }

  get trainer(): PolicyTrainer {
    return this.trainerRef;
  }

  /** Stop ids used when a request gives none: config.json's eos ids and the tokenizer's eos. */
  get defaultStopTokenIds(): number[] {
    const ids = new Set(this.model.config.eosTokenIds);
    if (this.tokenizerRef?.eosTokenId !== undefined) ids.add(this.tokenizerRef.eosTokenId);
    return [...ids];
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const tokenizer = this.tokenizerRef;
    const longestPrompt = request.prompts.reduce((most, p) => Math.max(most, p.length), 0);
    const shape = { what: 'sampling', rows: request.prompts.length, tokens: longestPrompt + request.maxNewTokens };
    return this.trapped(
      shape,
      generateInChunks(this.model, {
        prompts: request.prompts,
        maxNewTokens: request.maxNewTokens,
        temperature: request.temperature,
        topP: request.topP,
        topK: request.topK,
        stopTokenIds: request.stopTokenIds ?? this.defaultStopTokenIds,
        stopStrings: request.stopStrings,
        seed: request.seed,
        rowKeys: request.rowKeys,
        rowSeeds: request.rowSeeds,
        decode: tokenizer ? (ids) => tokenizer.decode(ids) : undefined,
        onToken: request.onToken,
        topLogProbs: request.topLogProbs,
      }),
    );
  }

  async score(request: ScoreRequest): Promise<ScoreResult> {
    const shape = { what: 'scoring', rows: request.batch.rows.length, tokens: longestSequence(request.batch) };
    return this.trapped(shape, scoreTokens(this.model, request.batch, request.withEntropy ?? false));
  }

  parameterNames(): string[] {
    return [...this.model.weights.keys()];
  }

  async update(request: UpdateRequest): Promise<UpdateResult> {
    if (request.optimizer.moments === '8bit') {
      const model = this.name.replace(/^tfjs:/, '');
      throw new DrmasError('CONFIG_INVALID', `${this.name} keeps AdamW's moments in float32 and cannot hold them in 8 bits`, {
        key: `models.${model}.optimizer.moments`,
        hint: `train model ${model} on onnx (models.${model}.backend: onnx), or set models.${model}.optimizer.moments: float32`,
      });
    }
    this.ensureLive();
    const rows = Math.min(request.batch.rows.length, request.microBatchSize || Infinity);
    return this.trapped({ what: 'training', rows, tokens: longestSequence(request.batch) }, this.trainerRef.update(request));
  }

  async save(dir: string, options: { optimizer?: boolean; dtype?: 'float32' | 'bfloat16' } = {}): Promise<void> {
    const withOptimizer = options.optimizer ?? true;
    await saveDecoderModel(dir, this.model, {
      dtype: options.dtype,
      tokenizer: this.tokenizerRef,
      extraFiles: withOptimizer ? await this.trainerRef.optimizer.serialize(this.trainerRef.settings) : undefined,
    });
  }

  /**
   * Replaces weights (and tokenizer, when the folder has one) from a checkpoint. Optimizer state is loaded when
   * asked, or by default when the folder has it; otherwise the optimizer restarts.
   */
  async load(dir: string, options: { optimizer?: boolean } = {}): Promise<void> {
    this.ensureLive();
    const loaded = await loadDecoderModel(dir);
    const tokenizer = loaded.tokenizerDir ? await Tokenizer.fromDirectory(loaded.tokenizerDir) : undefined;
    this.trainerRef.dispose();
    this.modelRef.dispose();
    this.modelRef = loaded.model;
    if (tokenizer) this.tokenizerRef = tokenizer;
    this.trainerRef = new PolicyTrainer(loaded.model);
    const hasState = await hasAdamWState(dir);
    if (options.optimizer ?? hasState) await this.trainerRef.optimizer.load(dir, loaded.model.weights);
  }

  async exportWeights(): Promise<Map<string, WeightTensor>> {
    return this.model.exportTensors();
  }

  async snapshotTraining(): Promise<TrainingSnapshot> {
    const snapshot: TfjsTrainingSnapshot = {
      engine: this.name,
      weights: await this.model.exportTensors(),
      optimizer: await this.trainerRef.optimizer.snapshot(),
      owner: this,
    };
    return snapshot;
  }

  async restoreTraining(snapshot: TrainingSnapshot): Promise<void> {
    const own = snapshot as Partial<TfjsTrainingSnapshot>;
    if (own.owner !== this || !own.weights || !own.optimizer) {
      throw new Error(`policy backend '${this.name}' was handed a training snapshot it did not make`);
    }
    this.model.assignTensors(own.weights);
    this.trainerRef.optimizer.restore(own.optimizer);
  }

  async syncWeights(from: PolicyBackend): Promise<void> {
    if (from === this) return;
    this.model.assignTensors(await from.exportWeights());
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.trainerRef.dispose();
    this.modelRef.dispose();
  }

  private ensureLive(): void {
    if (this.disposed) throw new BackendDisposedError(this.name);
  }

  private async trapped<T>(shape: { what: string; rows: number; tokens: number }, work: Promise<T>): Promise<T> {
    try {
      return await work;
    } catch (error) {
      throw wasmTrapError(error, this.runtime, shape.what, shape.rows, shape.tokens);
    }
  }
}

function longestSequence(view: BatchView): number {
  let longestPrompt = 0;
  for (const row of view.rows) longestPrompt = Math.max(longestPrompt, view.batch.promptIds[row]!.length);
  return longestPrompt + longestResponse(view);
}

function textCodecOf(tokenizer: Tokenizer): TextCodec {
  return {
    encode: (text, options) => tokenizer.encode(text, options),
    decode: (ids, options) => tokenizer.decode(Array.from(ids), options),
    applyChatTemplate: (messages, options) =>
      tokenizer.applyChatTemplate(
        messages.map((m) => ({ ...m })),
        options,
      ),
    chatTemplate: tokenizer.chatTemplate,
    eosTokenId: tokenizer.eosTokenId,
    vocabSize: tokenizer.vocabSize,
  };
}

/** Selects the runtime, then builds (`tiny`/`small`) or loads (a checkpoint folder) the model. */
export async function createTfjsPolicyBackend(options: TfjsBackendOptions): Promise<TfjsPolicyBackend> {
  const runtime = await selectRuntime(options.runtime ?? 'auto');
  const { config, weights, tokenizer } = await loadModelWeights(options);
  return new TfjsPolicyBackend(options.name ?? 'tfjs', runtime.description, DecoderModel.fromTensors(config, weights), tokenizer);
}
