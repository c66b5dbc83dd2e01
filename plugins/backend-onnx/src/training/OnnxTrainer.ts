import type { LoraSettings } from '@drmas/core';
import {
  lossColumnsOf,
  lossTotals,
  partMicroBatches,
  trainedColumns,
  type BatchView,
  type LossFunction,
  type LossTotals,
  type OptimizerSettings,
  type RatioDenominator,
  type UpdateRequest,
  type UpdateResult,
  type WeightTensor,
} from '@drmas/core';
import { loraModuleShape, promptResponseLayout, rotaryInverseFrequencies, SeededRandom, type DecoderConfig } from '@drmas/models';
import { GraphNames, loraDropoutMaskName } from '../DecoderGraph.js';
import type * as OrtModule from 'onnxruntime-node';
import { ortTensor, scoreFeeds, type Feeds } from '../DecoderFeeds.js';
import { loadOnnxRuntime, sessionOptions, type Ort, type ProviderName } from '../ExecutionProvider.js';
import { accumulateGradients, clippedAdamWStep, globalNorm } from './ClippedStep.js';
import { HostAdamW } from './HostAdamW.js';
import { SharedSessions } from '../SharedSessions.js';
import { defaultWeightLayout, type WeightLayout } from '../GraphWeights.js';
import { buildSegmentForwardGraph, buildTrainingGraph, gradientSlots, TrainingNames, type TrainingGraph } from './TrainingGraph.js';
import {
  backwardSegments,
  defaultMicroBatchTokens,
  largeModelSessionOptions,
  releaseRunOutputs,
  type BackwardSegmentsSetting,
} from './LargeModelMemory.js';

export interface GradientRequest {
  /** The rows to train on. */
  batch: BatchView;
  /** Totals of the whole mini-batch the loss normalizes by. */
  totals: LossTotals;
  loss: LossFunction;
  /** Rows per forward/backward run (default: all rows in one). */
  microBatchSize?: number;
  /**
   * Padded tokens per forward/backward run at most (`UpdateRequest.microBatchTokens`; default: no bound, or at large
   * sizes `defaultMicroBatchTokens` of the trainer's `memoryBudget` and the view's widest row).
   */
  microBatchTokens?: number;
  /** Report `actor/entropy` (token-mean entropy of the view's trained tokens). */
  entropyMetric?: boolean;
  /** `UpdateRequest.oldLogProbs`: with `current` the graph's ratio divides by its own log-probs, detached. */
  oldLogProbs?: RatioDenominator;
  /** Each batch row's agent: each agent's share of the gradient is summed on its own and its norm reported. */
  rowAgents?: UpdateRequest['rowAgents'];
}

export interface GradientResult {
  /** The mini-batch loss (the sum of its micro-batches' losses). */
  loss: number;
  /** The loss's metrics summed over micro-batches (each already scaled like the loss). */
  metrics: Record<string, number>;
  /** Gradients by Hugging Face tensor name, accumulated over micro-batches; owned by the trainer. */
  gradients: Map<string, Float32Array>;
  /** With `rowAgents`: the norm of each agent's share of `gradients` (0 for an agent with no row). */
  agentGradNorms?: number[];
  /** The training runs it took: its micro-batches. */
  microBatches: number;
}

type Session = OrtModule.InferenceSession;

/** A LoRA adapter to train on a frozen base (PEFT's tensor names without the `base_model.model.` prefix). */
export interface TrainedLora {
  settings: LoraSettings;
  adapter: Map<string, WeightTensor>;
  /** Seeds the dropout masks (with the optimizer step and the micro-batch, so a resumed run draws the same ones). */
  seed?: number;
}

export interface OnnxTrainerOptions {
  /** Train the given buffers in place (the map and its arrays become the trainer's) instead of copies. */
  adopt?: boolean;
  /**
   * Train only this adapter (adopted or copied like the weights); the Hugging Face weights are then a frozen base,
   * always used in place: no gradients, no optimizer state.
   */
  lora?: TrainedLora;
  /** The execution provider of the training sessions (default the CPU). */
  provider?: ProviderName;
  /** Sessions shared with other trainers (a run's models of one architecture); default this trainer's own. */
  sessions?: SharedSessions<TrainingSession>;
  /** Vocabulary columns per chunk of the output head (default `HEAD_VOCAB_CHUNK`). */
  vocabChunk?: number;
  /** How the training graph reads the weights (default `defaultWeightLayout` of the config). */
  layout?: WeightLayout;
  /** The layers' segments a training run's backward takes (`backwardSegments`; default `auto`). */
  backwardSegments?: BackwardSegmentsSetting;
  /**
   * The run's memory budget in bytes (`RunContext.memoryBudget`), which a large model's default micro-batch takes its
   * share of (`defaultMicroBatchTokens`); default none: the least default micro-batch.
   */
  memoryBudget?: number;
}
/** A training graph's session and what it outputs: the whole model's, or a segment's. */
export type SegmentSession = Omit<TrainingGraph, 'model'> & { session: Session };

/**
 * The sessions of one loss setting: one graph of the whole model, or a segmented backward's (`backwardSegments`):
 * the forward graphs of the segments below the last and each segment's graph, bottom to top.
 */
export interface TrainingSession {
  forwards: Session[];
  segments: SegmentSession[];
}

/** A pool of training sessions for the trainers of a run's models of one architecture to share. */
export function trainingSessionPool(): SharedSessions<TrainingSession> {
  return new SharedSessions(async ({ forwards, segments }) => {
    for (const session of [...forwards, ...segments.map((s) => s.session)]) await session.release();
  });
}

/**
 * Forward and backward passes of a decoder on onnxruntime-node, and its update (issue 19). The weights are the Hugging
 * Face tensors, in host buffers the trainer owns (or shares with the rollout graphs) and feeds to every run (the graph transposes and fuses
 * them); gradients of the micro-batches are added in place into buffers the trainer owns. One session per loss and
 * entropy setting; the mini-batch totals are fed to each run.
 */
export class OnnxTrainer {
  /** The trained tensors: the Hugging Face weights, or the LoRA adapter's. */
  readonly weights: Map<string, WeightTensor>;
  /** The Hugging Face weights: `weights` itself, or the frozen base under a LoRA adapter. */
  readonly base: Map<string, WeightTensor>;
  readonly lora: LoraSettings | undefined;
  private readonly dropoutSeed: number;
  readonly optimizer = new HostAdamW();
  private readonly gradientBuffers = new Map<string, Float32Array>();
  /** One agent's share of a gradient while it accumulates (`rowAgents`), made on first use. */
  private agentBuffers: Map<string, Float32Array> | undefined;
  private readonly sessions: SharedSessions<TrainingSession>;
  private usesSessions = false;
  /** What a session depends on besides the loss and its options; the weights are inputs, not part of it. */
  private readonly sessionKey: string;
  private readonly invFreq: Float64Array;
  private readonly weightFeeds: Feeds = {};
  private readonly provider: ProviderName;
  private readonly vocabChunk: number | undefined;
  readonly layout: WeightLayout;
  /** The layer ranges of the backward's segments, bottom to top (one: the whole model in one graph). */
  readonly segments: Array<[number, number]>;

  /** The settings of the latest update, saved with the optimizer state. */
  settings: OptimizerSettings | undefined;
  private readonly memoryBudget: number;

  private constructor(
    private readonly ort: Ort,
    readonly config: DecoderConfig,
    hf: Map<string, WeightTensor>,
    private readonly options: OrtModule.InferenceSession.SessionOptions,
    {
      adopt = false,
      lora,
      provider = 'cpu',
      sessions = trainingSessionPool(),
      vocabChunk,
      layout,
      backwardSegments: segments = 'auto',
      memoryBudget = 0,
    }: OnnxTrainerOptions,
  ) {
    this.memoryBudget = memoryBudget;
    this.provider = provider;
    this.vocabChunk = vocabChunk;
    this.layout = layout ?? defaultWeightLayout(config);
    this.segments = backwardSegments(config, segments, !lora && defaultWeightLayout(config) === 'shared');
    this.sessions = sessions;
    this.sessionKey = JSON.stringify([config, lora?.settings ?? null, provider, options, vocabChunk ?? null, this.layout, this.segments]);
    // Updates write into these buffers and the session reads them in place on every run: the caller's own (`adopt`,
    // shared with a rollout engine's graphs) or copies.
    const own = (tensors: Map<string, WeightTensor>) =>
      adopt ? tensors : new Map([...tensors].map(([name, t]) => [name, { shape: [...t.shape], data: Float32Array.from(t.data) }]));
    this.lora = lora?.settings;
    this.dropoutSeed = lora?.seed ?? 0;
    this.weights = own(lora ? lora.adapter : hf);
    this.base = lora ? hf : this.weights;
    this.invFreq = rotaryInverseFrequencies(config);
    for (const [name, w] of this.base) this.weightFeeds[name] = ortTensor(ort, w.data, w.shape);
    for (const [name, w] of this.weights) {
      this.weightFeeds[name] = ortTensor(ort, w.data, w.shape);
      this.gradientBuffers.set(name, new Float32Array(w.data.length));
    }
  }

  /**
   * A trainer over Hugging Face tensors (checked by the caller against the config), on `provider` (the CPU). With
   * `adopt` it trains `hf`'s buffers (or the LoRA adapter's) in place, else copies of them.
   */
  static async create(
    config: DecoderConfig,
    hf: Map<string, WeightTensor>,
    options: OrtModule.InferenceSession.SessionOptions = {},
    trainerOptions: OnnxTrainerOptions = {},
  ): Promise<OnnxTrainer> {
    return new OnnxTrainer(await loadOnnxRuntime(), config, hf, options, trainerOptions);
  }

  private session(loss: LossFunction, withEntropy: boolean, currentRatio: boolean): Promise<TrainingSession> {
    if (!this.usesSessions) {
      this.sessions.retain();
      this.usesSessions = true;
    }
    const withReference = loss.needsReference ?? false;
    const key = JSON.stringify([withEntropy, withReference, currentRatio, this.sessionKey]);
    return this.sessions.get(loss, key, async () => {
      const options = sessionOptions(this.provider, largeModelSessionOptions(this.config, this.options));
      const graphOptions = { lora: this.lora, layout: this.layout };
      const forwards: Session[] = [];
      const segments: SegmentSession[] = [];
      for (const [k, layers] of this.segments.entries()) {
        if (k < this.segments.length - 1)
          forwards.push(
            await this.ort.InferenceSession.create(buildSegmentForwardGraph(this.config, this.base, layers, graphOptions), options),
          );
        const { model, ...outputs } = buildTrainingGraph(this.config, this.base, loss, {
          withEntropy,
          withReference,
          currentRatio,
          vocabChunk: this.vocabChunk,
          layers,
          ...graphOptions,
        });
        segments.push({ session: await this.ort.InferenceSession.create(model, options), ...outputs });
      }
      return { forwards, segments };
    });
  }

  /** Sessions built so far: one per loss and entropy setting, whatever the mini-batches' totals. */
  get sessionCount(): number {
    return this.sessions.size;
  }

  /** Loss, metrics and gradients of `request.batch`'s rows, micro-batch by micro-batch.
   * The returned gradient buffers are reused by the next call. */
  async gradients(request: GradientRequest): Promise<GradientResult> {
    const { batch: view, totals, loss } = request;
    const withEntropy = (loss.needsEntropy ?? false) || (request.entropyMetric ?? false);
    const currentRatio = request.oldLogProbs === 'current';
    const sessions = await this.session(loss, withEntropy, currentRatio);
    const metricNames = sessions.segments[sessions.segments.length - 1]!.metrics;
    const totalFeeds: Feeds = {};
    for (const key of ['tokens', 'rows', 'responseLength'] as const)
      totalFeeds[TrainingNames.totals[key]] = ortTensor(this.ort, Float32Array.of(totals[key]), []);
    for (const g of this.gradientBuffers.values()) g.fill(0);
    const agents = request.rowAgents;
    const tokens = request.microBatchTokens ?? defaultMicroBatchTokens(this.config, this.memoryBudget, widestRow(view));
    // A pairwise loss's micro-batches take whole preference pairs (consecutive rows).
    const budget = tokens ? { tokens, batch: view.batch, unit: loss.pairedRows ? 2 : 1 } : undefined;
    const microBatches = partMicroBatches(view.rows, request.microBatchSize ?? 0, agents?.codes, budget);
    const agentGradNorms = agents ? new Array<number>(agents.agentCount).fill(0) : undefined;
    // With agents, micro-batches accumulate into `part` until their agent's last one, whose norm is then taken.
    const part = agents ? this.partBuffers() : this.gradientBuffers;
    let lossSum = 0;
    let entropySum = 0;
    const metrics: Record<string, number> = {};
    let start = 0;
    for (const [m, { rows: microRows, part: agent }] of microBatches.entries()) {
      if (loss.pairedRows && microRows.length % 2 !== 0)
        throw new Error(`OnnxTrainer: a micro-batch of ${microRows.length} rows would split a preference pair`);
      const feeds = this.feeds(view, microRows, loss, currentRatio);
      if (this.lora && this.lora.dropout > 0) this.addDropoutMasks(feeds, start);
      start += microRows.length;
      const out = await this.forwardBackward(sessions, { ...this.weightFeeds, ...totalFeeds, ...feeds }, part);
      lossSum += out.get(TrainingNames.loss)!;
      for (const name of metricNames) metrics[name] = (metrics[name] ?? 0) + out.get(TrainingNames.metric(name))!;
      if (withEntropy) entropySum += out.get(TrainingNames.entropySum)!;
      if (agentGradNorms && microBatches[m + 1]?.part !== agent) {
        agentGradNorms[agent] = globalNorm(part.values());
        for (const [name, buffer] of part) {
          const total = this.gradientBuffers.get(name)!;
          for (let i = 0; i < buffer.length; i++) total[i]! += buffer[i]!;
          buffer.fill(0);
        }
      }
    }
    if (request.entropyMetric) {
      const { tokens } = lossTotals(view, { responseLength: 1, microBatchSize: 1 });
      metrics['actor/entropy'] = tokens > 0 ? entropySum / tokens : 0;
    }
    return {
      loss: lossSum,
      metrics,
      microBatches: microBatches.length,
      gradients: this.gradientBuffers,
      ...(agentGradNorms && { agentGradNorms }),
    };
  }

  /**
   * One micro-batch's forward and backward, its gradients added into `part` in place (the buffers are both the
   * `grad_in/*` inputs and the bound `grad/*` outputs of every run); returns the top graph's scalar outputs (the loss,
   * its metrics, the entropy's sum). Segmented (`backwardSegments`): the lower segments' forward first, keeping the
   * hidden states between them, then each segment from the top, which returns the gradient of its input for the one
   * below.
   */
  private async forwardBackward({ forwards, segments }: TrainingSession, common: Feeds, part: Map<string, Float32Array>) {
    const boundary = TrainingNames.segment;
    const hidden: OrtModule.Tensor[] = [];
    for (const forward of forwards) {
      const out = await forward.run({ ...common, ...(hidden.length && { [boundary.hiddenIn]: hidden[hidden.length - 1]! }) });
      hidden.push(out[boundary.hiddenOut]!);
    }
    const scalars = new Map<string, number>();
    let upstream: OrtModule.Tensor | undefined;
    for (let k = segments.length - 1; k >= 0; k--) {
      const graph = segments[k]!;
      const out = await graph.session.run(
        {
          ...common,
          ...(k > 0 && { [boundary.hiddenIn]: hidden[k - 1]! }),
          ...(upstream && { [boundary.hiddenOutGradient]: upstream }),
          ...this.gradientFeeds(graph, part),
        },
        this.boundOutputs(graph, part),
      );
      for (const [name, t] of Object.entries(out)) if (t.dims.length === 0) scalars.set(name, scalar(t));
      accumulateGradients(part, out, { gradients: [], rowGradients: graph.rowGradients });
      upstream?.dispose();
      hidden[k - 1]?.dispose();
      const { [boundary.hiddenInGradient]: below, ...rest } = out;
      upstream = below;
      releaseRunOutputs(this.config, rest);
    }
    return scalars;
  }

  /** The `grad_in/*` inputs: the gradients accumulated so far in `from`. */
  private gradientFeeds(graph: SegmentSession, from: Map<string, Float32Array>): Feeds {
    const feeds: Feeds = {};
    for (const [slot, tensor] of this.gradientSlotTensors(graph, from)) feeds[slot.input] = tensor;
    return feeds;
  }

  /** The session's outputs with each weight's gradient bound to its buffer in `into` (the rest allocated by the run). */
  private boundOutputs(graph: SegmentSession, into: Map<string, Float32Array>): Record<string, OrtModule.Tensor | null> {
    const fetches: Record<string, OrtModule.Tensor | null> = Object.fromEntries(graph.session.outputNames.map((name) => [name, null]));
    for (const [slot, tensor] of this.gradientSlotTensors(graph, into)) fetches[slot.output] = tensor;
    return fetches;
  }

  /** Each gradient slot of the graph (`gradientSlots`) over its rows of the weight's buffer in `buffers`. */
  private *gradientSlotTensors(graph: SegmentSession, buffers: Map<string, Float32Array>) {
    for (const name of graph.gradients) {
      const { shape } = this.weights.get(name)!;
      const buffer = buffers.get(name)!;
      for (const slot of gradientSlots(graph, name)) {
        if (!slot.rows) {
          yield [slot, ortTensor(this.ort, buffer, shape)] as const;
          continue;
        }
        const [start, end] = slot.rows;
        const width = buffer.length / shape[0]!;
        yield [slot, ortTensor(this.ort, buffer.subarray(start * width, end * width), [end - start, ...shape.slice(1)])] as const;
      }
    }
  }

  /** Buffers like `gradientBuffers` for one agent's share of a gradient, made on first use. */
  private partBuffers(): Map<string, Float32Array> {
    this.agentBuffers ??= new Map([...this.gradientBuffers].map(([name, g]) => [name, new Float32Array(g.length)]));
    return this.agentBuffers;
  }

  /**
   * One optimizer step as the tfjs trainer takes it: gradients accumulated over the micro-batches, clipped to
   * `maxGradNorm` by global norm (the norm reported is before clipping, like torch's clip_grad_norm_), AdamW; a
   * non-finite norm, or one the request's `acceptGradNorm` refuses, skips the step.
   */
  async update(request: UpdateRequest): Promise<UpdateResult> {
    const { optimizer: settings, lrScale } = request;
    this.settings = settings;
    const result = await this.gradients(request);
    const step = clippedAdamWStep({
      weights: this.weights,
      gradients: result.gradients,
      optimizer: this.optimizer,
      settings,
      lrScale,
      // measureOnly: the norms are all that is wanted, nothing is applied
      acceptGradNorm: request.measureOnly ? () => false : request.acceptGradNorm,
    });
    const metrics = { ...result.metrics, 'actor/skipped_nonfinite': step.nonFinite ? 1 : 0, 'actor/micro_batches': result.microBatches };
    return {
      loss: result.loss,
      gradNorm: step.gradNorm,
      skipped: step.skipped,
      learningRate: settings.lr * lrScale,
      metrics,
      ...(result.agentGradNorms && { agentGradNorms: result.agentGradNorms }),
    };
  }

  /**
   * Inputs of one micro-batch, response columns trimmed after the last trained token (as the tfjs trainer's
   * `lossInput`).
   */
  private feeds(view: BatchView, rows: Int32Array, loss: LossFunction, currentRatio: boolean): Feeds {
    const { batch } = view;
    const R = batch.responseLength;
    const cut = trainedColumns(batch, rows);
    const { columns } = cut;
    const tensor = (values: Float32Array) => ortTensor(this.ort, values, [rows.length, columns]);
    const take = (flat: ArrayLike<number>) => tensor(cut.take(flat));
    const layout = promptResponseLayout(
      Array.from(rows, (r) => batch.promptIds[r]!),
      Array.from(rows, (r) => batch.responseIds.subarray(r * R, r * R + columns)),
      columns,
    );
    const feeds = scoreFeeds(
      this.ort,
      this.config,
      this.invFreq,
      layout,
      Array.from(rows, (r) => batch.temperatures[r]),
    );
    if (!currentRatio) feeds[TrainingNames.oldLogProbs] = take(batch.oldLogProbs ?? batch.rolloutLogProbs);
    for (const name of lossColumnsOf(loss)) feeds[TrainingNames.lossColumns[name]] = tensor(cut.column(name));
    feeds[TrainingNames.responseMask] = tensor(cut.responseMask());
    if (loss.needsReference) {
      if (!batch.refLogProbs) throw new Error('OnnxTrainer: the loss needs reference log-probs but the batch has none');
      feeds[TrainingNames.refLogProbs] = take(batch.refLogProbs);
    }
    return feeds;
  }

  /**
   * The adapter's dropout masks for the micro-batch from row `start` (`loraDropoutMaskName`), one per targeted module
   * and layer over the micro-batch's token columns, drawn from a stream of the seed, the optimizer step about to be
   * taken and `start`.
   */
  private addDropoutMasks(feeds: Feeds, start: number): void {
    const p = this.lora!.dropout;
    const keep = Math.fround(1 / (1 - p));
    const [rows, columns] = feeds[GraphNames.inputIds]!.dims as [number, number];
    const rng = new SeededRandom(((this.dropoutSeed * 1_000_003) ^ (this.optimizer.step * 65_537 + start)) >>> 0);
    for (let layer = 0; layer < this.config.numLayers; layer++) {
      for (const module of this.lora!.targetModules) {
        const width = loraModuleShape(this.config, module)[1];
        const mask = new Float32Array(rows * columns * width);
        for (let i = 0; i < mask.length; i++) mask[i] = rng.uniform() < p ? 0 : keep;
        feeds[loraDropoutMaskName(layer, module)] = ortTensor(this.ort, mask, [rows * columns, width]);
      }
    }
  }

  /** Lets go of the sessions (released once no trainer sharing them uses them); the trainer can still be used. */
  async release(): Promise<void> {
    if (!this.usesSessions) return;
    this.usesSessions = false;
    await this.sessions.release();
  }
}

export function scalar(t: OrtModule.Tensor | undefined): number {
  return (t!.data as Float32Array)[0]!;
}

/** The padded tokens of the view's widest row alone: its prompt and its response. */
function widestRow({ batch, rows }: BatchView): number {
  let widest = 0;
  for (const row of rows) widest = Math.max(widest, batch.promptIds[row]!.length + batch.responseLengths[row]!);
  return widest;
}
