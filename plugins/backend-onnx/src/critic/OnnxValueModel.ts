import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  DrmasError,
  trainedColumns,
  type BatchView,
  type CriticContexts,
  type OptimizerSettings,
  type UpdateResult,
  type ValueLossFunction,
  type ValueModel,
  type ValuesRequest,
  type ValueUpdateRequest,
  type WeightTensor,
} from '@drmas/core';
import {
  configJsonFor,
  loadModelWeights,
  promptResponseLayout,
  readSafetensors,
  rotaryInverseFrequencies,
  saveCheckpoint,
  serializeSafetensors,
  type DecoderConfig,
  type PromptResponseLayout,
} from '@drmas/models';
import type * as OrtModule from 'onnxruntime-node';
import { forwardFeeds, ortTensor, type Feeds } from '../DecoderFeeds.js';
import { GraphNames } from '../DecoderGraph.js';
import { loadOnnxRuntime, sessionOptions, type Ort } from '../ExecutionProvider.js';
import { accumulateGradients, clippedAdamWStep } from '../training/ClippedStep.js';
import { HostAdamW } from '../training/HostAdamW.js';
import { scalar } from '../training/OnnxTrainer.js';
import { TrainingNames } from '../training/TrainingGraph.js';
import { SharedSessions } from '../SharedSessions.js';
import { buildValueGraph, HEAD_BIAS, HEAD_WEIGHT, ValueNames, type ValueGraph } from './ValueGraph.js';

/** The value head's file in a critic's checkpoint folder, beside the trunk's Hugging Face files (the tfjs critic's). */
export const VALUE_HEAD_FILE = 'value_head.safetensors';
/** Rows x (prompt + response) columns per forward pass when computing values (the tfjs critic's chunks). */
const TOKENS_PER_CHUNK = 8192;

/** A decoder as the critic graphs read it: its config and Hugging Face tensors. */
export interface CriticDecoder {
  config: DecoderConfig;
  weights: Map<string, WeightTensor>;
}

/**
 * Where an onnx critic's trunk comes from: a decoder of its own (trained by the value loss), or the policy's, read
 * afresh on every use (the policy's updates write it in place) and never trained by the critic.
 */
export type OnnxCriticTrunk = { own: CriticDecoder } | { shared: () => CriticDecoder };

type Session = OrtModule.InferenceSession;
export type ValueSession = Omit<ValueGraph, 'model'> & { session: Session };

/** A pool of critic sessions for a run's critics of one architecture to share (their weights are the graphs' inputs). */
export function valueSessionPool(): SharedSessions<ValueSession> {
  return new SharedSessions((s) => s.session.release());
}

/** The scope of the values graph in the pool (the training graphs' scope is their loss). */
const VALUES = 'values';

/**
 * A critic on onnxruntime-node, as the tfjs backend's `TfjsValueModel` computes it: a decoder trunk and a scalar head
 * `score` (`[1, hidden]` weight and a bias), zero-initialized so every value starts at 0; the value of response token
 * t is the head on the final-normed hidden state that predicts t. The value loss is differentiated in the graph
 * (`buildValueGraph`); micro-batches add their gradients into host buffers, which are clipped by global norm and
 * stepped by `HostAdamW` with the critic's own optimizer settings. With a trunk of its own the loss trains trunk and
 * head; on the policy's trunk (`shareTrunk`), the head alone. Checkpoints are the tfjs critic's files.
 */
export class OnnxValueModel implements ValueModel {
  readonly optimizer = new HostAdamW();
  private readonly head: Map<string, WeightTensor>;
  private settings: OptimizerSettings | undefined;
  private usesSessions = false;
  private gradientBuffers: Map<string, Float32Array> | undefined;
  private invFreqOf: { config: DecoderConfig; invFreq: Float64Array } | undefined;

  private constructor(
    readonly name: string,
    readonly runtime: string,
    private readonly ort: Ort,
    private trunk: OnnxCriticTrunk,
    private readonly options: OrtModule.InferenceSession.SessionOptions,
    private readonly sessions: SharedSessions<ValueSession>,
  ) {
    const hidden = this.decoder.config.hiddenSize;
    this.head = new Map([
      [HEAD_WEIGHT, { shape: [1, hidden], data: new Float32Array(hidden) }],
      [HEAD_BIAS, { shape: [1], data: new Float32Array(1) }],
    ]);
  }

  static async create(
    name: string,
    runtime: string,
    trunk: OnnxCriticTrunk,
    options: OrtModule.InferenceSession.SessionOptions = {},
    /** Sessions shared with a run's other critics of the same architecture; default the critic's own. */
    sessions: SharedSessions<ValueSession> = valueSessionPool(),
  ): Promise<OnnxValueModel> {
    const owned: OnnxCriticTrunk = 'own' in trunk ? { own: trainedTrunk(trunk.own) } : trunk;
    return new OnnxValueModel(name, runtime, await loadOnnxRuntime(), owned, options, sessions);
  }

  private get decoder(): CriticDecoder {
    return 'own' in this.trunk ? this.trunk.own : this.trunk.shared();
  }

  /** What the value loss trains: the head, and the trunk when it is the critic's own. */
  private trained(): Map<string, WeightTensor> {
    return 'own' in this.trunk ? new Map([...this.trunk.own.weights, ...this.head]) : this.head;
  }

  parameterNames(): string[] {
    return [...this.trained().keys()];
  }

  /** The trunk's and the head's host buffers as feeds (wrapped, not copied: updates write them in place). */
  private weightFeeds(decoder: CriticDecoder): Feeds {
    const feeds: Feeds = {};
    for (const [name, w] of [...decoder.weights, ...this.head]) feeds[name] = ortTensor(this.ort, w.data, w.shape);
    return feeds;
  }

  /** The values graph's session (no loss), or the training graph's of `loss`, built on first use. */
  session(loss?: ValueLossFunction): Promise<ValueSession> {
    if (!this.usesSessions) {
      this.sessions.retain();
      this.usesSessions = true;
    }
    const { config, weights } = this.decoder;
    const trainTrunk = 'own' in this.trunk;
    const key = JSON.stringify([graphConfig(config), trainTrunk, this.options]);
    return this.sessions.get(loss ?? VALUES, key, async () => {
      const { model, ...outputs } = buildValueGraph(config, weights, { loss, trainTrunk });
      const session = await this.ort.InferenceSession.create(model, sessionOptions('cpu', this.options));
      return { session, ...outputs };
    });
  }

  /** The forward inputs of a layout: ids, rope tables, attention bias, and the predicting columns. */
  private layoutFeeds(config: DecoderConfig, layout: PromptResponseLayout): Feeds {
    if (this.invFreqOf?.config !== config) this.invFreqOf = { config, invFreq: rotaryInverseFrequencies(config) };
    const { rows, promptColumns: p, responseColumns: r } = layout;
    const feeds = forwardFeeds(this.ort, config, this.invFreqOf.invFreq, { ...layout, rows, columns: p + r });
    feeds[GraphNames.predictStart] = ortTensor(this.ort, BigInt64Array.of(BigInt(p - 1)), [1]);
    feeds[GraphNames.predictEnd] = ortTensor(this.ort, BigInt64Array.of(BigInt(p - 1 + r)), [1]);
    return feeds;
  }

  async values(request: ValuesRequest): Promise<Float32Array> {
    const { batch, rows } = request.batch;
    const R = batch.responseLength;
    const out = new Float32Array(rows.length * R);
    const { session } = await this.session(undefined);
    const decoder = this.decoder;
    const weights = this.weightFeeds(decoder);
    for (const chunk of valueChunks(request.batch, request.contexts)) {
      const responses = Array.from(chunk.rows, (r) => batch.responseIds.subarray(r * R, r * R + batch.responseLengths[r]!));
      const layout = promptResponseLayout(
        Array.from(chunk.rows, (r) => promptOf(request.batch, request.contexts, r)),
        responses,
      );
      const result = await session.run({ ...weights, ...this.layoutFeeds(decoder.config, layout) });
      const data = result[ValueNames.values]!.data as Float32Array;
      const r = layout.responseColumns;
      responses.forEach((response, i) => out.set(data.subarray(i * r, i * r + response.length), (chunk.start + i) * R));
      for (const t of Object.values(result)) t.dispose();
    }
    return out;
  }

  async update(request: ValueUpdateRequest): Promise<UpdateResult> {
    const view = request.batch;
    const { batch } = view;
    if (!batch.values) throw new Error(`critic ${this.name}: the batch has no values to clip the value loss against`);
    this.settings = request.optimizer;
    const graph = await this.session(request.loss);
    const decoder = this.decoder;
    const trained = this.trained();
    const buffers = this.gradients(trained, graph);
    const weights = this.weightFeeds(decoder);
    const totals: Feeds = {};
    for (const key of ['tokens', 'rows', 'responseLength'] as const)
      totals[TrainingNames.totals[key]] = ortTensor(this.ort, Float32Array.of(request.totals[key]), []);
    const R = batch.responseLength;
    const micro = Math.max(1, Math.floor(request.microBatchSize || view.rows.length));
    let loss = 0;
    const metrics: Record<string, number> = Object.fromEntries(graph.metrics.map((name) => [name, 0]));
    for (let start = 0; start < view.rows.length; start += micro) {
      const rows = view.rows.subarray(start, Math.min(view.rows.length, start + micro));
      const { columns, take, responseMask } = trainedColumns(batch, rows);
      const layout = promptResponseLayout(
        Array.from(rows, (r) => promptOf(view, request.contexts, r)),
        Array.from(rows, (r) => batch.responseIds.subarray(r * R, r * R + columns)),
        columns,
      );
      const column = (flat: ArrayLike<number>) => ortTensor(this.ort, take(flat), [rows.length, columns]);
      const out = await graph.session.run({
        ...weights,
        ...totals,
        ...this.layoutFeeds(decoder.config, layout),
        [ValueNames.oldValues]: column(batch.values),
        [ValueNames.returns]: column(batch.returns),
        [TrainingNames.responseMask]: ortTensor(this.ort, responseMask(), [rows.length, columns]),
      });
      loss += scalar(out[TrainingNames.loss]);
      for (const name of graph.metrics) metrics[name]! += scalar(out[TrainingNames.metric(name)]);
      accumulateGradients(buffers, out, graph);
      for (const t of Object.values(out)) t.dispose();
    }
    const step = clippedAdamWStep({
      weights: trained,
      gradients: buffers,
      optimizer: this.optimizer,
      settings: request.optimizer,
      lrScale: request.lrScale,
      acceptGradNorm: request.acceptGradNorm,
    });
    return {
      loss,
      gradNorm: step.gradNorm,
      skipped: step.skipped,
      learningRate: request.optimizer.lr * request.lrScale,
      metrics: { ...metrics, skipped_nonfinite: step.nonFinite ? 1 : 0 },
    };
  }

  /**
   * Zeroed gradient buffers of the trained tensors the loss reaches (an untied output projection gets none, so AdamW
   * leaves it as tfjs does); kept between updates, remade when the tensors change.
   */
  private gradients(trained: Map<string, WeightTensor>, graph: ValueSession): Map<string, Float32Array> {
    const names = new Set([...graph.gradients, ...graph.rowGradients.map((r) => r.weight)]);
    const fits =
      this.gradientBuffers?.size === names.size &&
      [...names].every((name) => this.gradientBuffers!.get(name)?.length === trained.get(name)!.data.length);
    if (!fits) this.gradientBuffers = new Map([...names].map((name) => [name, new Float32Array(trained.get(name)!.data.length)]));
    for (const g of this.gradientBuffers!.values()) g.fill(0);
    return this.gradientBuffers!;
  }

  async save(dir: string): Promise<void> {
    const files = {
      [VALUE_HEAD_FILE]: serializeSafetensors(this.head, { dtype: 'F32' }),
      ...this.optimizer.serialize(this.trained(), this.settings),
    };
    if ('own' in this.trunk) {
      const { config, weights } = this.trunk.own;
      await saveCheckpoint(dir, { config: configJsonFor(config), tensors: weights, dtype: 'F32', extraFiles: files });
      return;
    }
    await mkdir(dir, { recursive: true });
    for (const [name, content] of Object.entries(files)) await writeFile(join(dir, name), content);
  }

  async load(dir: string): Promise<void> {
    if ('own' in this.trunk) {
      const loaded = await loadModelWeights({ model: dir });
      const own = this.trunk.own;
      const fits =
        graphConfig(loaded.config) === graphConfig(own.config) &&
        loaded.weights.size === own.weights.size &&
        [...loaded.weights].every(([name, t]) => own.weights.get(name)?.data.length === t.data.length);
      if (fits) {
        // Into the buffers the critic already owns, as the head is: the sessions need no rebuild.
        for (const [name, t] of loaded.weights) own.weights.get(name)!.data.set(t.data);
      } else {
        this.trunk = { own: trainedTrunk(loaded) };
        await this.release();
      }
    }
    const file = join(dir, VALUE_HEAD_FILE);
    const { tensors } = await readSafetensors(file);
    for (const [name, w] of this.head) {
      const saved = tensors.get(name);
      if (!saved || saved.data.length !== w.data.length) {
        throw new DrmasError('CHECKPOINT_INVALID', `the value head's ${name} is missing or does not match shape [${w.shape.join(', ')}]`, {
          file,
          hint: "resume with the critic settings that wrote the checkpoint (config.json in its run directory): the head must fit the critic's trunk",
        });
      }
      w.data.set(saved.data);
    }
    await this.optimizer.load(dir, this.trained());
  }

  /** Lets go of the sessions (released once no critic sharing them uses them; rebuilt on demand). */
  private async release(): Promise<void> {
    if (!this.usesSessions) return;
    this.usesSessions = false;
    await this.sessions.release();
  }

  dispose(): void {
    void this.release();
  }
}

/** The model as far as the graphs go (its config.json's metadata, such as torch_dtype, aside). */
function graphConfig(config: DecoderConfig): string {
  return JSON.stringify({ ...config, raw: undefined });
}

/**
 * A trunk the value loss trains: each tensor's shape and float32 data only. A loader's `dtype` (BF16 of the checkpoint
 * read, as the presets' bases are) would make `save` round the trained trunk to it, and a resumed run value with
 * other weights than the run it continues.
 */
function trainedTrunk(decoder: CriticDecoder): CriticDecoder {
  return { config: decoder.config, weights: new Map([...decoder.weights].map(([name, t]) => [name, { shape: t.shape, data: t.data }])) };
}

/** The tokens a critic reads before a row's response: the joint context when given, else the row's prompt. */
function promptOf(view: BatchView, contexts: CriticContexts | undefined, row: number): ArrayLike<number> {
  return contexts?.get(row) ?? view.batch.promptIds[row]!;
}

/** Consecutive runs of a view's rows with at most `TOKENS_PER_CHUNK` padded tokens each (at least one row). */
function valueChunks(view: BatchView, contexts: CriticContexts | undefined): { start: number; rows: Int32Array }[] {
  const { batch, rows } = view;
  const width = (row: number) => promptOf(view, contexts, row).length + batch.responseLengths[row]!;
  const chunks: { start: number; rows: Int32Array }[] = [];
  let start = 0;
  while (start < rows.length) {
    let end = start + 1;
    let longest = width(rows[start]!);
    while (end < rows.length) {
      const next = Math.max(longest, width(rows[end]!));
      if ((end + 1 - start) * next > TOKENS_PER_CHUNK) break;
      longest = next;
      end++;
    }
    chunks.push({ start, rows: rows.subarray(start, end) });
    start = end;
  }
  return chunks;
}
