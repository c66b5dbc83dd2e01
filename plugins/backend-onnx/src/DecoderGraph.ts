import type { LoraSettings, LoraTargetModule } from '@drmas/core';
import type { WeightTensor } from '@drmas/core';
import { loraModuleShape, loraScaling, loraTensorNames, loraTensorShapes, type DecoderConfig } from '@drmas/models';
import { DataType, GraphBuilder, type GraphWriter } from './onnx/GraphBuilder.js';
import { HEAD_VOCAB_CHUNK, writeChunkedScoreHead } from './VocabChunkedHead.js';
import { fusedWeights, sharedWeights, type StoredWeights, type WeightLayout, type WeightReader } from './GraphWeights.js';
import type { WeightPrecision } from './weights/HalfWeights.js';

/**
 * How the weights enter the graphs: as graph inputs (fed on every run from host buffers the backend owns, so a
 * weight sync only swaps buffers) or as initializers baked into the model (a sync must rebuild the session).
 */
export type WeightMode = 'inputs' | 'initializers';

export type DecoderGraphKind = 'prefill' | 'decode' | 'score';

/** Names of the graphs' non-weight inputs and outputs. */
export const GraphNames = {
  inputIds: 'input_ids',
  ropeCos: 'rope_cos',
  ropeSin: 'rope_sin',
  attentionBias: 'attention_bias',
  targets: 'targets',
  predictStart: 'predict_start',
  predictEnd: 'predict_end',
  inverseTemperature: 'inverse_temperature',
  pastKey: (layer: number) => `past_key.${layer}`,
  pastValue: (layer: number) => `past_value.${layer}`,
  key: (layer: number) => `key.${layer}`,
  value: (layer: number) => `value.${layer}`,
  logProbs: 'log_probs',
  entropy: 'entropy',
} as const;

const INT64_MAX = Number.MAX_SAFE_INTEGER;

/**
 * Writes one of the three graphs of a Llama / Qwen2 / Qwen3 decoder, computing what `DecoderModel.forward` of the
 * tfjs backend computes (same rope tables, mask convention and GQA grouping):
 *
 * - `prefill`: `input_ids [batch, columns]` -> temperature-1 `log_probs [batch, vocab]` of the last column, and
 *   each layer's keys `key.i` (after rope) and values `value.i`, both `[batch, kvHeads, columns, headDim]`.
 * - `decode`: one new column attending to host-owned caches `past_key.i` and `past_value.i`, both
 *   `[batch, kvHeads, keys, headDim]` (unfilled slots are masked), and to itself; outputs the log-probs and the new
 *   column's `key.i` / `value.i [batch, kvHeads, 1, headDim]`, which the caller writes into its caches (one
 *   contiguous `headDim` run per row and head). The caches are read in place: nothing proportional to the context is
 *   copied per step (the keys' product takes them transposed, `transB`, as onnxruntime fuses it).
 * - `score`: teacher-forced `log_probs` and `entropy [batch, responses]` of `targets` predicted from columns
 *   `[predict_start, predict_end)`, each row's logits multiplied by its `inverse_temperature [batch, 1, 1]`.
 *
 * Rope tables (`rope_cos`, signed `rope_sin`) and the additive `attention_bias` are computed by the caller.
 *
 * Under `float16` the weights are float16 inputs, each cast to float32 where it is read (a gathered embedding row, a
 * chunk of the head's rows, a layer's projection), so that a run holds float32 copies only of what it reads now.
 * Under a `float16` `cache` the keys and values the prefill and decode graphs output, and the decode graph's past
 * ones, are float16 (the host's caches half the bytes), cast to and from float32 at the graph's edge: a decode step
 * then makes a float32 copy of each layer's past keys and values while it reads them.
 */
export function buildDecoderGraph(
  config: DecoderConfig,
  kind: DecoderGraphKind,
  weights: ReadonlyMap<string, WeightTensor | { shape: number[] }>,
  weightMode: WeightMode = 'inputs',
  lora?: LoraSettings,
  layout: WeightLayout = 'fused',
  precision: WeightPrecision = 'float32',
  cache: WeightPrecision = 'float32',
): Uint8Array {
  const g = new GraphBuilder(`drmas-${config.modelType}-${kind}`);
  // `weights` are the graph weights (`graphWeights`) under `fused`, the Hugging Face tensors under `shared`; their
  // shapes define the inputs, their values the initializers.
  const half = precision === 'float16';
  const weight = new Map<string, string>();
  for (const [name, t] of weights) {
    if (weightMode === 'inputs') weight.set(name, g.input(name, half ? 'float16' : 'float', t.shape));
    else if ('data' in t && !half) weight.set(name, g.initializer(name, 'float', t.shape, t.data));
    else throw new Error(`buildDecoderGraph: initializer '${name}' needs float32 values`);
  }
  const stored = (name: string): string => {
    const value = weight.get(name);
    if (!value) throw new Error(`buildDecoderGraph: weight '${name}' is missing`);
    return value;
  };
  const storedWeights: StoredWeights | undefined = half
    ? { value: stored, toFloat: (x) => g.op('Cast', [x], { to: DataType.float }) }
    : undefined;
  const w = storedWeights ? (name: string) => storedWeights.toFloat(stored(name)) : stored;
  const shape = kind === 'decode' ? 'narrow' : 'wide';
  const reader = layout === 'shared' ? sharedWeights(g, config, w, shape, storedWeights) : fusedWeights(g, config, w, shape, storedWeights);
  const forward = writeDecoderForward(g, config, kind, reader, lora && writeLoraInputs(g, config, lora).graph, undefined, cache);
  if (kind === 'score') {
    const head = writeScoreHead(g, config, forward, reader);
    g.output(head.logProbs, GraphNames.logProbs, 'float', ['batch', 'responses']);
    g.output(head.entropy(), GraphNames.entropy, 'float', ['batch', 'responses']);
  } else {
    g.output(forward.lastLogProbs(), GraphNames.logProbs, 'float', ['batch', config.vocabSize]);
  }
  return g.toModelProto();
}

/**
 * LoRA adapters in a graph: each targeted projection's output gains `scaling * (x A^T) B^T`, with A `[r, in]` and
 * B `[out, r]` graph values in PEFT's layout (never merged into the base weight, so one graph serves any adapter fed
 * to it).
 */
export interface LoraGraph {
  scaling: number;
  /** The adapter of a layer's module, or undefined where the module is not targeted. */
  adapter: (layer: number, module: LoraTargetModule) => { a: string; b: string; dropoutMask?: string } | undefined;
}

/**
 * `scaling * (x A^T) B^T` for x `[..., in]`, A `[r, in]`, B `[out, r]`: the low-rank product on its narrow side (x A^T
 * is `[..., r]`, scaled there before B^T widens it).
 */
export function writeLoraProduct(g: GraphWriter, x: string, a: string, b: string, scaling: number, dropoutMask?: string): string {
  const input = dropoutMask ? g.op('Mul', [x, dropoutMask]) : x;
  const down = g.op('Mul', [g.op('MatMul', [input, g.op('Transpose', [a], { perm: [1, 0] })]), g.scalar(scaling)]);
  return g.op('MatMul', [down, g.op('Transpose', [b], { perm: [1, 0] })]);
}

/**
 * The training graph's input holding a module's dropout mask, `[tokens, in]`: 0 where PEFT's `lora_dropout` drops an
 * input element of the adapter, 1 / (1 - p) elsewhere (inverted dropout, as torch's). Drawn on the host per
 * micro-batch from a seeded stream, so a resumed run draws the same masks.
 */
export function loraDropoutMaskName(layer: number, module: LoraTargetModule): string {
  return `lora_dropout_mask/${layer}/${module}`;
}

/**
 * Declares the adapter tensors of `settings` as graph inputs named as in the PEFT state dict without its prefix
 * (`model.layers.N.self_attn.q_proj.lora_A.weight`), fed per run: an agent's adapter is whatever is fed.
 */
export function writeLoraInputs(
  g: GraphWriter,
  config: DecoderConfig,
  settings: LoraSettings,
  { dropoutMasks = false }: { dropoutMasks?: boolean } = {},
): { graph: LoraGraph; inputs: Map<string, string> } {
  const inputs = new Map<string, string>();
  for (const [name, shape] of loraTensorShapes(config, settings)) inputs.set(name, g.input(name, 'float', shape));
  const masks = new Map<string, string>();
  for (let layer = 0; layer < config.numLayers && dropoutMasks; layer++) {
    for (const module of settings.targetModules) {
      const name = loraDropoutMaskName(layer, module);
      masks.set(name, g.input(name, 'float', ['tokens', loraModuleShape(config, module)[1]]));
    }
  }
  return {
    inputs,
    graph: {
      scaling: loraScaling(settings),
      adapter: (layer, module) => {
        if (!settings.targetModules.includes(module)) return undefined;
        const { a, b } = loraTensorNames(layer, module);
        return { a: inputs.get(a)!, b: inputs.get(b)!, dropoutMask: masks.get(loraDropoutMaskName(layer, module)) };
      },
    },
  };
}

/** What the score and training graphs build on: the decoder's hidden states and its helpers. */
export interface DecoderForward {
  /** Hidden states after the last layer (before the final norm), `[batch * columns, hidden]` (`[batch, hidden]` in decode). */
  hidden: string;
  rmsNorm: (x: string, weightName: string) => string;
  /** A shape tensor `[batch, columns, ...tail]` taken from the ids. */
  shapeWith: (tail: number[]) => string;
  /** prefill and decode: the temperature-1 log-probs `[batch, vocab]` of the last column. */
  lastLogProbs: () => string;
}

/**
 * Layers `[start, end)` of the decoder: from `start > 0` the hidden states entering layer `start` come from
 * `hiddenIn` (`[batch * columns, hidden]`) instead of the embedding (a segment of a segmented backward,
 * `TrainingGraph.ts`).
 */
export interface LayerRange {
  start: number;
  end: number;
  hiddenIn?: string;
}

/**
 * Writes the inputs (ids, rope tables, attention bias; the decode graph's caches) and the decoder body into `g`,
 * reading the weights through `weights` (either layout). Shared by the inference graphs and the training graph.
 * `layers` writes only a range of the layers (default all); `cache` is the precision of the keys and values the
 * prefill and decode graphs output and the decode graph reads (`buildDecoderGraph`).
 */
export function writeDecoderForward(
  g: GraphWriter,
  config: DecoderConfig,
  kind: DecoderGraphKind,
  weights: WeightReader,
  lora?: LoraGraph,
  layers: LayerRange = { start: 0, end: config.numLayers },
  cache: WeightPrecision = 'float32',
): DecoderForward {
  const c = config;
  const d = c.headDim;
  const kvHeads = c.numKvHeads;
  const group = c.numHeads / c.numKvHeads;
  const n = GraphNames;

  const decode = kind === 'decode';
  const columns = decode ? 1 : 'columns';
  const cacheType = cache === 'float16' ? 'float16' : 'float';
  const toCache = (x: string): string => (cache === 'float16' ? g.op('Cast', [x], { to: DataType.float16 }) : x);
  // A float16 past is cast once its layer is reached (the reshape reads the batch from the layer's queries): cast
  // from the graph's inputs alone, onnxruntime runs every layer's cast first and holds every float32 copy at once.
  const fromCache = (x: string, layerValue: string): string => {
    if (cache !== 'float16') return x;
    const batch = g.op('Slice', [g.op('Shape', [layerValue]), g.ints([0]), g.ints([1])]);
    const inLayer = g.op('Reshape', [x, g.op('Concat', [batch, g.ints([kvHeads, -1, d])], { axis: 0 })]);
    return g.op('Cast', [inLayer], { to: DataType.float });
  };
  const ids = g.input(n.inputIds, 'int64', ['batch', columns]);
  const cos = g.input(n.ropeCos, 'float', decode ? ['batch', 1, 1, d] : ['batch', columns, 1, 1, d]);
  const sin = g.input(n.ropeSin, 'float', decode ? ['batch', 1, 1, d] : ['batch', columns, 1, 1, d]);
  const bias = g.input(n.attentionBias, 'float', decode ? ['batch', 1, 1, 'keys_plus_one'] : ['batch', 1, `${group}*columns`, columns]);

  const rmsNorm = (x: string, weightName: string): string => {
    const variance = g.op('ReduceMean', [g.op('Pow', [x, g.scalar(2)])], { axes: [-1], keepdims: 1 });
    const denominator = g.op('Sqrt', [g.op('Add', [variance, g.scalar(c.rmsNormEps)])]);
    return g.op('Mul', [g.op('Div', [x, denominator]), weights.tensor(weightName)]);
  };
  const linear = (x: string, name: string, biasName?: string): string => weights.project(x, name, biasName)[0]!;
  const adapted = (y: string, x: string, layer: number, module: LoraTargetModule): string => {
    const adapter = lora?.adapter(layer, module);
    return adapter ? g.op('Add', [y, writeLoraProduct(g, x, adapter.a, adapter.b, lora!.scaling, adapter.dropoutMask)]) : y;
  };
  const half = d / 2;
  const rotary = (x: string): string => {
    const first = g.op('Slice', [x, g.ints([0]), g.ints([half]), g.ints([-1])]);
    const second = g.op('Slice', [x, g.ints([half]), g.ints([d]), g.ints([-1])]);
    const swapped = g.op('Concat', [second, first], { axis: -1 });
    return g.op('Add', [g.op('Mul', [x, cos]), g.op('Mul', [swapped, sin])]);
  };
  const mlp = (x: string, i: number): string => {
    const [gateBase, upBase] = weights.project(x, `gate_up.${i}`, c.mlpBias ? `gate_up_bias.${i}` : undefined) as [string, string];
    const gate = adapted(gateBase, x, i, 'gate_proj');
    const up = adapted(upBase, x, i, 'up_proj');
    const act = g.op('Mul', [g.op('Mul', [gate, g.op('Sigmoid', [gate])]), up]);
    return adapted(linear(act, `down.${i}`, c.mlpBias ? `down_bias.${i}` : undefined), act, i, 'down_proj');
  };
  const scale = g.scalar(1 / Math.sqrt(d));

  // Dynamic shapes derived from the ids: [batch, columns, ...].
  const idsShape = g.op('Shape', [ids]);
  const shapeWith = (tail: number[]): string => g.op('Concat', [idsShape, g.ints(tail)], { axis: 0 });
  const qShape = decode ? g.ints([-1, kvHeads, group, d]) : shapeWith([kvHeads, group, d]);
  const kvShape = decode ? g.ints([-1, kvHeads, 1, d]) : shapeWith([kvHeads, 1, d]);

  let x: string;
  if (layers.start === 0) x = weights.gather('embed', g.op('Reshape', [ids, g.ints([-1])]));
  else if (layers.hiddenIn) x = layers.hiddenIn;
  else throw new Error(`writeDecoderForward: layers from ${layers.start} need the hidden states entering them`);
  for (let i = layers.start; i < layers.end; i++) {
    const normed = rmsNorm(x, `input_norm.${i}`);
    const [qFlat, kFlat, vFlat] = weights.project(normed, `qkv.${i}`, c.qkvBias ? `qkv_bias.${i}` : undefined) as [string, string, string];
    let q = g.op('Reshape', [adapted(qFlat, normed, i, 'q_proj'), qShape]);
    let k = g.op('Reshape', [adapted(kFlat, normed, i, 'k_proj'), kvShape]);
    const v = g.op('Reshape', [adapted(vFlat, normed, i, 'v_proj'), kvShape]);
    if (c.qkNorm) {
      q = rmsNorm(q, `q_norm.${i}`);
      k = rmsNorm(k, `k_norm.${i}`);
    }
    q = g.op('Mul', [rotary(q), scale]);
    k = rotary(k);

    let context: string;
    if (decode) {
      // q [batch, kvHeads, group, d]; k, v [batch, kvHeads, 1, d].
      g.output(toCache(k), n.key(i), cacheType, ['batch', kvHeads, 1, d]);
      g.output(toCache(v), n.value(i), cacheType, ['batch', kvHeads, 1, d]);
      const pastKey = fromCache(g.input(n.pastKey(i), cacheType, ['batch', kvHeads, 'keys', d]), q);
      const pastValue = fromCache(g.input(n.pastValue(i), cacheType, ['batch', kvHeads, 'keys', d]), q);
      const pastScores = g.op('MatMul', [q, g.op('Transpose', [pastKey], { perm: [0, 1, 3, 2] })]);
      const selfScore = g.op('ReduceSum', [g.op('Mul', [q, k]), g.ints([-1])], { keepdims: 1 });
      const scores = g.op('Add', [g.op('Concat', [pastScores, selfScore], { axis: -1 }), bias]);
      const probs = g.op('Softmax', [scores], { axis: -1 });
      const pastProbs = g.op('Slice', [probs, g.ints([0]), g.ints([-1]), g.ints([-1])]);
      const selfProb = g.op('Slice', [probs, g.ints([-1]), g.ints([INT64_MAX]), g.ints([-1])]);
      const mixed = g.op('Add', [g.op('MatMul', [pastProbs, pastValue]), g.op('Mul', [selfProb, v])]);
      context = g.op('Reshape', [mixed, g.ints([-1, c.numHeads * d])]);
    } else {
      // q [batch, columns, kvHeads, group, d] -> [batch, kvHeads, group * columns, d] (query head h uses KV head
      // floor(h / group), transformers' repeat_kv).
      const qGrouped = g.op('Reshape', [g.op('Transpose', [q], { perm: [0, 2, 3, 1, 4] }), g.ints([0, 0, -1, d])]);
      const keysT = g.op('Reshape', [g.op('Transpose', [k], { perm: [0, 2, 3, 4, 1] }), g.ints([0, 0, d, -1])]);
      const values = g.op('Reshape', [g.op('Transpose', [v], { perm: [0, 2, 3, 1, 4] }), g.ints([0, 0, -1, d])]);
      if (kind === 'prefill') {
        const keys = g.op('Reshape', [g.op('Transpose', [k], { perm: [0, 2, 3, 1, 4] }), g.ints([0, 0, -1, d])]);
        g.output(toCache(keys), n.key(i), cacheType, ['batch', kvHeads, columns, d]);
        g.output(toCache(values), n.value(i), cacheType, ['batch', kvHeads, columns, d]);
      }
      const probs = g.op('Softmax', [g.op('Add', [g.op('MatMul', [qGrouped, keysT]), bias])], { axis: -1 });
      const grouped = g.op('Reshape', [g.op('MatMul', [probs, values]), g.ints([0, 0, group, -1, d])]);
      context = g.op('Reshape', [g.op('Transpose', [grouped], { perm: [0, 3, 1, 2, 4] }), g.ints([-1, c.numHeads * d])]);
    }
    x = g.op('Add', [x, adapted(linear(context, `o.${i}`, c.outputBias ? `o_bias.${i}` : undefined), context, i, 'o_proj')]);
    x = g.op('Add', [x, mlp(rmsNorm(x, `post_norm.${i}`), i)]);
  }

  const h = c.hiddenSize;
  const logSoftmax = (hidden: string): string => g.op('LogSoftmax', [linear(rmsNorm(hidden, 'norm'), 'lm_head')], { axis: -1 });

  return {
    hidden: x,
    rmsNorm,
    shapeWith,
    lastLogProbs: () => {
      const last = decode
        ? x
        : g.op('Reshape', [
            g.op('Slice', [g.op('Reshape', [x, shapeWith([h])]), g.ints([-1]), g.ints([INT64_MAX]), g.ints([1])]),
            g.ints([-1, h]),
          ]);
      return logSoftmax(last);
    },
  };
}

/** The score head's outputs: `[batch, responses]` values. */
export interface ScoreHead {
  logProbs: string;
  /** Writes the entropy nodes (on demand: the training graph needs them only for some losses). */
  entropy: () => string;
}

export interface ScoreHeadOptions {
  /** Vocabulary columns per chunk of a wide head (`HEAD_VOCAB_CHUNK`). */
  vocabChunk?: number;
}

/**
 * Writes the score head over `forward`'s hidden states: the inputs `targets`, `predict_start`, `predict_end` and
 * `inverse_temperature`, the tempered log-softmax of the predicting columns, the targets' log-probs and entropies.
 * A vocabulary wider than `vocabChunk` is scored in chunks of it (`writeChunkedScoreHead`), never as a
 * `[rows, tokens, vocab]` tensor.
 */
export function writeScoreHead(
  g: GraphWriter,
  config: DecoderConfig,
  forward: DecoderForward,
  weights: WeightReader,
  { vocabChunk = HEAD_VOCAB_CHUNK }: ScoreHeadOptions = {},
): ScoreHead {
  const c = config;
  const n = GraphNames;
  const h = c.hiddenSize;
  const { rmsNorm, shapeWith } = forward;
  const x = forward.hidden;
  const targets = g.input(n.targets, 'int64', ['batch', 'responses']);
  const start = g.input(n.predictStart, 'int64', [1]);
  const end = g.input(n.predictEnd, 'int64', [1]);
  const inverseTemperature = g.input(n.inverseTemperature, 'float', ['batch', 1, 1]);
  const byRow = g.op('Reshape', [x, shapeWith([h])]);
  const predicting = g.op('Slice', [byRow, start, end, g.ints([1])]);
  if (c.vocabSize > vocabChunk) {
    const head = writeChunkedScoreHead(
      g,
      {
        hidden: rmsNorm(predicting, 'norm'),
        // The Hugging Face rows: no transposed copy, and the gradient in their layout.
        head: weights.chunkedHead(),
        targets,
        inverseTemperature,
        hiddenSize: h,
        vocabSize: c.vocabSize,
      },
      vocabChunk,
    );
    return { logProbs: head.logProbs, entropy: () => head.entropy };
  }
  const normed = rmsNorm(predicting, 'norm');
  const product = g.op('Reshape', [
    weights.project(g.op('Reshape', [normed, g.ints([-1, h])]), 'lm_head')[0]!,
    g.op('Concat', [g.op('Shape', [targets]), g.ints([c.vocabSize])], { axis: 0 }),
  ]);
  const logits = g.op('Mul', [product, inverseTemperature]);
  const logp = g.op('Reshape', [g.op('LogSoftmax', [logits], { axis: -1 }), g.ints([-1, c.vocabSize])]);
  const targetShape = g.op('Shape', [targets]);
  const picked = g.op('GatherElements', [logp, g.op('Reshape', [targets, g.ints([-1, 1])])], { axis: 1 });
  return {
    logProbs: g.op('Reshape', [picked, targetShape]),
    entropy: () => {
      const plogp = g.op('ReduceSum', [g.op('Mul', [g.op('Exp', [logp]), logp]), g.ints([-1])], { keepdims: 0 });
      return g.op('Reshape', [g.op('Neg', [plogp]), targetShape]);
    },
  };
}
