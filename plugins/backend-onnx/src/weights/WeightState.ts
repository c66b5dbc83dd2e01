import { DrmasError, type LoraSettings, type WeightTensor } from '@drmas/core';
import {
  expectedWeightShapes,
  initLoraAdapter,
  rotaryInverseFrequencies,
  SeededRandom,
  type DecoderConfig,
  type Tokenizer,
} from '@drmas/models';
import type { WeightMode } from '../DecoderGraph.js';
import { ortTensor, type Feeds } from '../DecoderFeeds.js';
import type { Ort } from '../ExecutionProvider.js';
import { defaultWeightLayout, graphWeights, refreshGraphWeights, type WeightLayout } from '../GraphWeights.js';
import { OnnxWeightMismatchError } from '../OnnxBackendErrors.js';
import { toFloat16, type HalfTensor, type WeightPrecision } from './HalfWeights.js';

export interface WeightStateOptions {
  /** How weights enter the graphs (default `inputs`). */
  weightMode?: WeightMode;
  /** How the graphs hold the weights (default `defaultWeightLayout`). */
  weightLayout?: WeightLayout;
  /** A LoRA adapter on the weights, which are then a frozen base. */
  lora?: { settings: LoraSettings; /** Seeds PEFT's init of A (default 0). */ seed?: number };
  /**
   * How the host holds the graphs' weights (default `float32`). `float16`: converted once here, the float32 ones let
   * go; the engine is frozen (it samples and scores; it neither trains nor saves). Needs weights as inputs, no LoRA.
   */
  weightPrecision?: WeightPrecision;
}

/**
 * An engine's model as its graphs read it: the config, the Hugging Face tensors (what `exportWeights` and `save` give),
 * the graphs' weights derived from them, the feeds that hand both to a run, the rotary frequencies, the tokenizer and
 * the LoRA adapter. The sampler, the scorer, the trainer and the checkpoint IO share one.
 */
export class WeightState {
  readonly weightMode: WeightMode;
  readonly lora: WeightStateOptions['lora'];
  readonly precision: WeightPrecision;
  private configRef: DecoderConfig;
  /** Hugging Face tensors (what `exportWeights` and `save` give). */
  private weightsRef: Map<string, WeightTensor>;
  /** The graphs' weights: derived from `weights` (`graphWeights`) under the `fused` layout, `weights` itself under `shared`. */
  private graphWeightsRef: Map<string, WeightTensor>;
  /** Under `float16`: the graphs' weights as float16 (`weights` and `graphWeights` are then empty). */
  private halfRef = new Map<string, HalfTensor>();
  private layoutRef: WeightLayout;
  private feedsRef: Feeds = {};
  private invFreqRef: Float64Array;
  /** The LoRA adapter (PEFT names without prefix), trained in place; the weights are then never changed. */
  readonly adapter: Map<string, WeightTensor> | undefined;
  tokenizer: Tokenizer | undefined;

  constructor(
    private readonly ort: Ort,
    config: DecoderConfig,
    weights: Map<string, WeightTensor>,
    tokenizer: Tokenizer | undefined,
    private readonly options: WeightStateOptions,
  ) {
    this.weightMode = options.weightMode ?? 'inputs';
    this.lora = options.lora;
    this.precision = options.weightPrecision ?? 'float32';
    this.configRef = config;
    this.weightsRef = checkedWeights(config, weights);
    this.layoutRef = options.weightLayout ?? defaultWeightLayout(config);
    this.graphWeightsRef = this.graphWeightsOf(this.weightsRef);
    if (this.precision === 'float16') {
      if (this.weightMode !== 'inputs' || options.lora) {
        throw new DrmasError('INVALID_ARGUMENT', `float16 weights need weightMode 'inputs' and no LoRA adapter`, {
          key: 'weightPrecision',
          hint: "hold them in float32 (weightPrecision: 'float32'), or feed them as inputs without an adapter",
        });
      }
      // One float16 copy per buffer: a tied head is the embedding's.
      const halves = new Map<Float32Array, HalfTensor>();
      for (const [name, w] of this.graphWeightsRef) {
        let half = halves.get(w.data);
        if (!half) halves.set(w.data, (half = toFloat16(name, w)));
        this.halfRef.set(name, half);
      }
      this.weightsRef = new Map();
      this.graphWeightsRef = new Map();
    }
    this.tokenizer = tokenizer;
    this.invFreqRef = rotaryInverseFrequencies(config);
    const lora = options.lora;
    this.adapter = lora && initLoraAdapter(config, lora.settings, new SeededRandom(lora.seed ?? 0));
    this.feedsRef = this.makeWeightFeeds();
  }

  get config(): DecoderConfig {
    return this.configRef;
  }

  get weights(): Map<string, WeightTensor> {
    return this.weightsRef;
  }

  get graphWeights(): Map<string, WeightTensor> {
    return this.graphWeightsRef;
  }

  /** The shapes of the graphs' weights, by graph-weight name (either precision). */
  get graphWeightShapes(): Map<string, number[]> {
    const source = this.precision === 'float16' ? this.halfRef : this.graphWeightsRef;
    return new Map([...source].map(([name, w]) => [name, w.shape]));
  }

  /**
   * Bytes of the weight buffers held on the host: the weights, their stacked copies (`fused`; a graph weight of one
   * part is the weight's own buffer) and float16 copy where held.
   */
  get heldBytes(): number {
    const buffers = new Set<ArrayBufferView>();
    for (const held of [this.weightsRef, this.graphWeightsRef, this.halfRef]) for (const w of held.values()) buffers.add(w.data);
    let bytes = 0;
    for (const data of buffers) bytes += data.byteLength;
    return bytes;
  }

  get layout(): WeightLayout {
    return this.layoutRef;
  }

  /** What every run of the graphs is fed besides its own inputs: the weights (when inputs) and the adapter. */
  get feeds(): Feeds {
    return this.feedsRef;
  }

  get invFreq(): Float64Array {
    return this.invFreqRef;
  }

  /** The tensors `update` trains: the LoRA adapter's, or the weights. */
  get trained(): Map<string, WeightTensor> {
    return this.adapter ?? this.weightsRef;
  }

  /** What the graphs read: `weights` themselves, or their derived copy under the `fused` layout. */
  private graphWeightsOf(weights: Map<string, WeightTensor>): Map<string, WeightTensor> {
    return this.layoutRef === 'fused' ? graphWeights(this.configRef, weights) : weights;
  }

  private makeWeightFeeds(): Feeds {
    const feeds: Feeds = {};
    if (this.weightMode === 'inputs') for (const [name, w] of this.graphWeightsRef) feeds[name] = ortTensor(this.ort, w.data, w.shape);
    for (const [name, w] of this.halfRef) feeds[name] = new this.ort.Tensor('float16', w.data, w.shape);
    // The adapter is always an input: its buffers are trained in place and read by the next run.
    for (const [name, w] of this.adapter ?? []) feeds[name] = ortTensor(this.ort, w.data, w.shape);
    return feeds;
  }

  /**
   * After `weights` changed in place: the derived graph weights follow. False under LoRA, where the frozen base did not
   * change (the adapter's buffers are fed in place).
   */
  weightsChanged(): boolean {
    if (this.adapter) return false;
    if (this.layoutRef === 'fused') refreshGraphWeights(this.configRef, this.weightsRef, this.graphWeightsRef);
    return true;
  }

  /** Takes `weights` in place (checked by `checkedWeights`) with graph weights and feeds derived from them. */
  adopt(weights: Map<string, WeightTensor>): void {
    this.weightsRef = weights;
    this.graphWeightsRef = this.graphWeightsOf(this.weightsRef);
    this.feedsRef = this.makeWeightFeeds();
  }

  /** Copies the values of `weights` (checked by `checkedWeights`) into the buffers held now. */
  copyFrom(weights: Map<string, WeightTensor>): void {
    for (const [name, w] of weights) this.weightsRef.get(name)!.data.set(w.data);
  }

  /** Another model shape (a checkpoint of another config): its layout and rotary frequencies; the weights follow. */
  reshape(config: DecoderConfig): void {
    this.configRef = config;
    this.layoutRef = this.options.weightLayout ?? defaultWeightLayout(config);
    this.invFreqRef = rotaryInverseFrequencies(config);
  }

  /** Copies of the Hugging Face tensors. */
  export(): Map<string, WeightTensor> {
    const out = new Map<string, WeightTensor>();
    for (const [name, w] of this.weightsRef) out.set(name, { shape: [...w.shape], data: w.data.slice() });
    return out;
  }

  /** Lets go of every buffer (a disposed engine). */
  clear(): void {
    this.weightsRef = new Map();
    this.graphWeightsRef = new Map();
    this.halfRef = new Map();
    this.feedsRef = {};
  }
}

/** What the graphs are specialised on (everything but the weights' values). */
export function graphShape(c: DecoderConfig): unknown[] {
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
export function checkedWeights(config: DecoderConfig, weights: Map<string, WeightTensor>): Map<string, WeightTensor> {
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
