import type { ValueLossFunction, WeightTensor } from '@drmas/core';
import type { DecoderConfig } from '@drmas/models';
import { GraphNames, writeDecoderForward } from '../DecoderGraph.js';
import { DifferentiableGraph } from '../training/DifferentiableGraph.js';
import { onnxTensorOps } from '../training/OnnxTensorOps.js';
import { TrainingNames, writeGradientOutputs, writeHuggingFaceWeights, type TrainingGraph } from '../training/TrainingGraph.js';

/** The value head's tensors, named like transformers' `*ForTokenClassification` score layer with one label (veRL's critic). */
export const HEAD_WEIGHT = 'score.weight';
export const HEAD_BIAS = 'score.bias';

/** Names of the critic graphs' inputs and outputs beyond the decoder's and the training graph's. */
export const ValueNames = {
  values: 'values',
  oldValues: 'old_values',
  returns: 'returns',
} as const;

export interface ValueGraph extends Omit<TrainingGraph, 'metrics'> {
  /** Metric names of the value loss, each an output `metric/<name>` (none without a loss). */
  metrics: string[];
}

/**
 * Writes a critic's graph over the trunk's Hugging Face tensors (inputs, as the training graph's) and the head
 * `score.weight [1, hidden]`, `score.bias [1]`: the decoder forward, the final norm of the columns
 * `[predict_start, predict_end)` (the hidden states that predict the response tokens: veRL's
 * `values[:, -response_length - 1 : -1]`) and the head on them, output `values [batch, responses]`. With `loss`,
 * also the value loss over the inputs `old_values`, `returns`, `response_mask` and the `totals/*` scalars, its
 * metrics, and the gradients of the head (and of every trunk tensor with `trainTrunk`).
 */
export function buildValueGraph(
  config: DecoderConfig,
  trunk: Map<string, WeightTensor>,
  options: { loss?: ValueLossFunction; trainTrunk: boolean },
): ValueGraph {
  const g = new DifferentiableGraph(`drmas-${config.modelType}-${options.loss ? 'critic-train' : 'critic'}`);
  const { inputs, reader } = writeHuggingFaceWeights(g, config, trunk);
  const h = config.hiddenSize;
  const headWeight = g.input(HEAD_WEIGHT, 'float', [1, h]);
  const headBias = g.input(HEAD_BIAS, 'float', [1]);
  const forward = writeDecoderForward(g, config, 'score', reader);
  const start = g.input(GraphNames.predictStart, 'int64', [1]);
  const end = g.input(GraphNames.predictEnd, 'int64', [1]);
  const predicting = g.op('Slice', [g.op('Reshape', [forward.hidden, forward.shapeWith([h])]), start, end, g.ints([1])]);
  const hidden = forward.rmsNorm(predicting, 'norm');
  const scored = g.op('Add', [g.op('MatMul', [hidden, g.op('Transpose', [headWeight], { perm: [1, 0] })]), headBias]);
  const values = g.op('Reshape', [scored, g.ints([0, -1])]);
  const n = TrainingNames;
  if (!options.loss) {
    g.output(values, ValueNames.values, 'float', ['batch', 'responses']);
    return { model: g.builder.toModelProto(), metrics: [], gradients: [], gradientBlocks: new Map(), rowGradients: [] };
  }
  const column = (name: string) => g.input(name, 'float', ['batch', 'responses']);
  const out = options.loss.compute(onnxTensorOps(g), {
    values,
    oldValues: column(ValueNames.oldValues),
    returns: column(ValueNames.returns),
    responseMask: column(n.responseMask),
    totals: {
      tokens: g.input(n.totals.tokens, 'float', []),
      rows: g.input(n.totals.rows, 'float', []),
      responseLength: g.input(n.totals.responseLength, 'float', []),
    },
  });
  g.output(out.loss, n.loss, 'float', []);
  const metrics = Object.keys(out.metrics);
  for (const name of metrics) g.output(out.metrics[name]!, n.metric(name), 'float', []);
  const trained = new Map<string, string>([...(options.trainTrunk ? inputs : []), [HEAD_WEIGHT, headWeight], [HEAD_BIAS, headBias]]);
  const shapes = new Map<string, number[]>([
    ...[...trunk].map(([name, t]): [string, number[]] => [name, t.shape]),
    [HEAD_WEIGHT, [1, h]],
    [HEAD_BIAS, [1]],
  ]);
  const backward = writeGradientOutputs(g, out.loss, trained, shapes);
  return { model: g.builder.toModelProto(), metrics, ...backward };
}
