import type { LoraSettings } from '@drmas/core';
import { lossColumnsOf, type LossColumn, type LossFunction, type LossTotalsInput, type WeightTensor } from '@drmas/core';
import { loraTensorShapes, type DecoderConfig } from '@drmas/models';
import { writeDecoderForward, writeLoraInputs, writeScoreHead } from '../DecoderGraph.js';
import { fusedWeights, graphWeightSources, sharedWeights, type WeightLayout, type WeightReader } from '../GraphWeights.js';
import { DifferentiableGraph } from './DifferentiableGraph.js';
import { onnxTensorOps } from './OnnxTensorOps.js';

/** Names of the training graph's inputs and outputs beyond the score graph's. */
export const TrainingNames = {
  oldLogProbs: 'old_log_probs',
  /** The batch columns a loss declares (`LossFunction.columns`), each an input of its own. */
  lossColumns: { advantages: 'advantages', lossWeights: 'loss_weights', preference: 'preference' } satisfies Record<LossColumn, string>,
  responseMask: 'response_mask',
  refLogProbs: 'ref_log_probs',
  /** The mini-batch totals the loss normalizes by, float scalars fed per run (one session serves every mini-batch). */
  totals: { tokens: 'totals/tokens', rows: 'totals/rows', responseLength: 'totals/response_length' } satisfies LossTotalsInput<string>,
  loss: 'loss',
  /** Sum over trained tokens of the per-token entropy (for the `actor/entropy` metric). */
  entropySum: 'entropy_sum',
  metric: (name: string) => `metric/${name}`,
  gradient: (weight: string) => `grad/${weight}`,
  /** The gradient accumulated so far, which the policy's training graph adds its own to (`grad/<weight>`). */
  gradientIn: (weight: string) => `grad_in/${weight}`,
  /** A weight's gradient in row blocks (`TrainingGraph.gradientBlocks`): the block from row `start`, out and in. */
  gradientBlock: (weight: string, start: number) => `grad/${weight}#${start}`,
  gradientBlockIn: (weight: string, start: number) => `grad_in/${weight}#${start}`,
  /** The k-th row gradient of a gathered weight (an embedding): the rows and the ids they add to. */
  gradientRows: (weight: string, k: number) => `grad_rows/${k}/${weight}`,
  gradientIds: (weight: string, k: number) => `grad_ids/${k}/${weight}`,
  /**
   * A segment's boundaries (`backwardSegments`): the hidden states entering its first layer and leaving its last, and
   * the loss's gradient with respect to each (the one leaving fed from the segment above, the one entering returned).
   */
  segment: {
    hiddenIn: 'segment/hidden_in',
    hiddenOut: 'segment/hidden_out',
    hiddenInGradient: 'segment/grad_hidden_in',
    hiddenOutGradient: 'segment/grad_hidden_out',
  },
} as const;

export interface TrainingGraphOptions {
  /** Compute the per-token entropy (the loss asks for it, or the entropy metric is on). */
  withEntropy: boolean;
  /** Feed reference log-probs (the loss has a KL term). */
  withReference: boolean;
  /** The loss's old log-probs are the graph's own, detached (`UpdateRequest.oldLogProbs: current`): no input for them. */
  currentRatio?: boolean;
  /**
   * Train a LoRA adapter of these settings instead: the adapter's tensors become inputs and get the gradients; the
   * Hugging Face weights are frozen inputs with none.
   */
  lora?: LoraSettings;
  /** Vocabulary columns per chunk of the output head (default `HEAD_VOCAB_CHUNK`; tests set it small). */
  vocabChunk?: number;
  /** How the graph reads the Hugging Face tensors (default `fused`: stacked in the graph). */
  layout?: WeightLayout;
  /**
   * Only layers `[start, end)` (a segment of a segmented backward): from `start > 0` the hidden states entering them
   * are an input and their gradient an output; below the last layer the graph ends at the segment's hidden states,
   * whose gradient is an input, and its scalar is their sum weighted by it (the loss's own gradients, exactly).
   */
  layers?: [number, number];
}

export interface TrainingGraph {
  model: Uint8Array;
  /** Metric names of the loss, each an output `metric/<name>`. */
  metrics: string[];
  /** Weights with an output `grad/<weight>` (the rest of a gathered weight's gradient comes as rows). */
  gradients: string[];
  /**
   * Weights of `gradients` whose accumulated gradient passes in row blocks `[start, end)` instead (the chunked
   * output head's: one block per vocabulary chunk), each block its own input and output (`gradientSlots`).
   */
  gradientBlocks: Map<string, Array<[number, number]>>;
  /** Row gradients (outputs `grad_rows/<k>/<weight>`, `grad_ids/<k>/<weight>`) to add into the weight's gradient. */
  rowGradients: { weight: string; rows: string; ids: string }[];
}

/**
 * Writes a training graph: the score graph's forward (`writeDecoderForward` + `writeScoreHead`, shared with the
 * inference graphs), `loss.compute` over `onnxTensorOps` on the loss inputs `old_log_probs` (or, with `currentRatio`, the graph's own
 * log-probs, detached), the columns the loss
 * declares (`advantages`; `loss_weights`, `preference`), `response_mask` (and `ref_log_probs`), all
 * `[batch, responses]`, and the mini-batch totals (`totals/*` scalars), and the gradients, next to `loss` and the loss's
 * metrics: an output `grad/<weight>` per weight, except that the embedding's gathered rows come out as rows with
 * their ids (`rowGradients`) for the trainer to add in a fixed order (`DifferentiableGraph.gradientsAndRows`).
 * `weights` are the Hugging Face tensors (their names and shapes).
 */
export function buildTrainingGraph(
  config: DecoderConfig,
  weights: Map<string, WeightTensor>,
  loss: LossFunction,
  options: TrainingGraphOptions,
): TrainingGraph {
  const g = new DifferentiableGraph(`drmas-${config.modelType}-train`);
  const layers = options.layers ?? [0, config.numLayers];
  const { inputs, reader, adapter, hiddenIn, forward } = writeLayersForward(g, config, weights, layers, options);
  const segment = TrainingNames.segment;
  // The trained tensors: the adapter's, or every Hugging Face weight.
  const trained = adapter?.inputs ?? inputs;
  const shapes = options.lora ? loraTensorShapes(config, options.lora) : new Map([...weights].map(([name, t]) => [name, t.shape]));
  const inputGradient = hiddenIn === undefined ? undefined : { value: hiddenIn, name: segment.hiddenInGradient };
  if (layers[1] < config.numLayers) {
    const upstream = g.input(segment.hiddenOutGradient, 'float', ['tokens', config.hiddenSize]);
    const weighted = g.op('ReduceSum', [g.op('Mul', [forward.hidden, upstream])], { keepdims: 0 });
    const written = writeGradientOutputs(g, weighted, trained, shapes, { accumulate: true, inputGradient });
    return { model: g.builder.toModelProto(), metrics: [], ...written };
  }
  const head = writeScoreHead(g, config, forward, reader, { vocabChunk: options.vocabChunk });
  const column = (name: string) => g.input(name, 'float', ['batch', 'responses']);
  const n = TrainingNames;
  const responseMask = column(n.responseMask);
  const input = {
    logProbs: head.logProbs,
    oldLogProbs: options.currentRatio ? g.stopGradient(head.logProbs) : column(n.oldLogProbs),
    ...Object.fromEntries(lossColumnsOf(loss).map((name) => [name, column(n.lossColumns[name])])),
    responseMask,
    refLogProbs: options.withReference ? column(n.refLogProbs) : undefined,
    entropy: options.withEntropy ? head.entropy() : undefined,
    totals: {
      tokens: g.input(n.totals.tokens, 'float', []),
      rows: g.input(n.totals.rows, 'float', []),
      responseLength: g.input(n.totals.responseLength, 'float', []),
    },
  };
  const out = loss.compute(onnxTensorOps(g), input);
  g.output(out.loss, n.loss, 'float', []);
  const metrics = Object.keys(out.metrics);
  for (const name of metrics) g.output(out.metrics[name]!, n.metric(name), 'float', []);
  if (input.entropy) {
    const masked = g.op('Mul', [g.stopGradient(input.entropy), responseMask]);
    g.output(g.op('ReduceSum', [masked], { keepdims: 0 }), n.entropySum, 'float', []);
  }
  const written = writeGradientOutputs(g, out.loss, trained, shapes, { accumulate: true, inputGradient });
  return { model: g.builder.toModelProto(), metrics, ...written };
}

/**
 * The forward graph of a segment below the last (`backwardSegments`): layers `[start, end)` from the ids (or, past the
 * first, `segment/hidden_in`) to `segment/hidden_out`, the hidden states the next segment starts from.
 */
export function buildSegmentForwardGraph(
  config: DecoderConfig,
  weights: Map<string, WeightTensor>,
  layers: [number, number],
  options: Pick<TrainingGraphOptions, 'lora' | 'layout'>,
): Uint8Array {
  const g = new DifferentiableGraph(`drmas-${config.modelType}-segment-forward`);
  const { forward } = writeLayersForward(g, config, weights, layers, options);
  g.output(forward.hidden, TrainingNames.segment.hiddenOut, 'float', ['tokens', config.hiddenSize]);
  return g.builder.toModelProto();
}

/**
 * The weights' and the adapter's inputs and the forward of layers `[start, end)`, from the ids or, past the first
 * layer, from the input `segment/hidden_in`.
 */
function writeLayersForward(
  g: DifferentiableGraph,
  config: DecoderConfig,
  weights: Map<string, WeightTensor>,
  [start, end]: [number, number],
  options: Pick<TrainingGraphOptions, 'lora' | 'layout'>,
) {
  const { inputs, reader } = writeHuggingFaceWeights(g, config, weights, options.layout);
  const adapter = options.lora && writeLoraInputs(g, config, options.lora, { dropoutMasks: options.lora.dropout > 0 });
  const hiddenIn = start > 0 ? g.input(TrainingNames.segment.hiddenIn, 'float', ['tokens', config.hiddenSize]) : undefined;
  const forward = writeDecoderForward(g, config, 'score', reader, adapter?.graph, { start, end, hiddenIn });
  return { inputs, reader, adapter, hiddenIn, forward };
}

/**
 * Declares the Hugging Face tensors as graph inputs and reads them in `layout`: under `fused` the graph weights are
 * derived from them in the graph (stacked; each derivation written on first use), under `shared` they are
 * read as they are. Gradients come out per Hugging Face tensor either way; a tied embedding's one gradient sums its
 * two uses, and the output head (a chunked one) is read as the tensor's rows, its gradient in their layout.
 */
export function writeHuggingFaceWeights(
  g: DifferentiableGraph,
  config: DecoderConfig,
  weights: Map<string, WeightTensor>,
  layout: WeightLayout = 'fused',
): { inputs: Map<string, string>; reader: WeightReader } {
  const inputs = new Map<string, string>();
  for (const [name, t] of weights) inputs.set(name, g.input(name, 'float', t.shape));
  const hf = (name: string): string => {
    const value = inputs.get(name);
    if (!value) throw new Error(`buildTrainingGraph: weight '${name}' is missing`);
    return value;
  };
  const sources = graphWeightSources(config);
  const derived = new Map<string, string>();
  const w = (name: string): string => {
    let value = derived.get(name);
    if (!value) {
      const source = sources.get(name);
      if (!source) throw new Error(`buildTrainingGraph: no graph weight '${name}'`);
      const parts = source.parts.map(hf);
      value = parts.length === 1 ? parts[0]! : g.op('Concat', parts, { axis: 0 });
      derived.set(name, value);
    }
    return value;
  };
  const reader = layout === 'shared' ? sharedWeights(g, config, hf) : fusedWeights(g, config, w);
  return { inputs, reader };
}

/**
 * Writes the gradients of `loss` with respect to the `trained` inputs (name -> graph value) as outputs: `grad/<name>`
 * per tensor the loss depends on, except that an embedding's gathered rows come out as rows with their ids for the
 * trainer to add in a fixed order (`DifferentiableGraph.gradientsAndRows`). `shapes` are the trained tensors' shapes.
 * With `accumulate`, each `grad/<name>` is `grad_in/<name>` (an input: the micro-batches' sum so far) plus this run's
 * gradient, so a trainer binding both to one buffer accumulates in place, with no gradient copied out of a run; a
 * gradient written in row blocks (the chunked head's) is added block by block, each block bound to its rows of the
 * buffer (`gradientSlots`), so no tensor of the whole weight is made for it.
 */
export function writeGradientOutputs(
  g: DifferentiableGraph,
  loss: string,
  trained: Map<string, string>,
  shapes: Map<string, number[]>,
  { accumulate = false, inputGradient }: { accumulate?: boolean; inputGradient?: { value: string; name: string } } = {},
): Pick<TrainingGraph, 'gradients' | 'gradientBlocks' | 'rowGradients'> {
  const n = TrainingNames;
  const shapeOf = (name: string): number[] => shapes.get(name)!;
  const names = [...trained.keys()];
  const weightOf = new Map(names.map((name) => [trained.get(name)!, name]));
  const values = names.map((name) => trained.get(name)!);
  const backward = g.gradientsAndRows(loss, inputGradient ? [...values, inputGradient.value] : values, new Set(weightOf.keys()), {
    rowBlocks: accumulate,
  });
  if (inputGradient) {
    const grad = backward.gradients.pop();
    const value = grad === undefined ? g.zerosLike(inputGradient.value) : g.joined(grad);
    g.output(value, inputGradient.name, 'float', g.shape(inputGradient.value));
  }
  const gradients: string[] = [];
  const gradientBlocks = new Map<string, Array<[number, number]>>();
  backward.gradients.forEach((grad, i) => {
    if (grad === undefined) return;
    const name = names[i]!;
    const shape = shapeOf(name);
    gradients.push(name);
    if (typeof grad !== 'string') {
      const blocks = grad.blocks.map(({ start }, k): [number, number] => [start, grad.blocks[k + 1]?.start ?? shape[0]!]);
      gradientBlocks.set(name, blocks);
      for (const [k, [start, end]] of blocks.entries()) {
        const value = grad.blocks[k]!.value;
        const rows = g.shape(value)[0];
        if (rows !== end - start)
          throw new Error(`writeGradientOutputs: '${name}' block at row ${start} has ${rows} rows, not ${end - start}`);
        const blockShape = [end - start, ...shape.slice(1)];
        const total = g.op('Add', [g.input(n.gradientBlockIn(name, start), 'float', blockShape), value]);
        g.output(total, n.gradientBlock(name, start), 'float', blockShape);
      }
      return;
    }
    if (accumulate) g.addedOutput(grad, g.input(n.gradientIn(name), 'float', shape), n.gradient(name), shape);
    else g.output(grad, n.gradient(name), 'float', shape);
  });
  const rowGradients = backward.rows.map(({ value, indices, rows }, k) => {
    const weight = weightOf.get(value)!;
    const dims = shapeOf(weight).slice(1);
    return {
      weight,
      rows: g.output(rows, n.gradientRows(weight, k), 'float', ['rows', ...dims]),
      ids: g.output(indices, n.gradientIds(weight, k), 'int64', ['rows']),
    };
  });
  return { gradients, gradientBlocks, rowGradients };
}

/** One input and output a weight's accumulated gradient passes through: the whole tensor, or rows `[start, end)` of it. */
export interface GradientSlot {
  input: string;
  output: string;
  rows?: [number, number];
}

/** The slots of `weight`'s accumulated gradient in `graph`: the whole tensor, or one per row block. */
export function gradientSlots(graph: Pick<TrainingGraph, 'gradientBlocks'>, weight: string): GradientSlot[] {
  const n = TrainingNames;
  const blocks = graph.gradientBlocks.get(weight);
  if (!blocks) return [{ input: n.gradientIn(weight), output: n.gradient(weight) }];
  return blocks.map(([start, end]) => ({
    input: n.gradientBlockIn(weight, start),
    output: n.gradientBlock(weight, start),
    rows: [start, end],
  }));
}
