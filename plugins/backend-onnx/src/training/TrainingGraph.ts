import type { LossFunction, LossTotals, WeightTensor } from '@drmas/core';
import type { DecoderConfig } from '@drmas/models';
import { writeDecoderForward, writeScoreHead } from '../DecoderGraph.js';
import { graphWeightSources } from '../GraphWeights.js';
import { DifferentiableGraph } from './DifferentiableGraph.js';
import { onnxTensorOps } from './OnnxTensorOps.js';

/** Names of the training graph's inputs and outputs beyond the score graph's. */
export const TrainingNames = {
  oldLogProbs: 'old_log_probs',
  advantages: 'advantages',
  responseMask: 'response_mask',
  refLogProbs: 'ref_log_probs',
  loss: 'loss',
  /** Sum over trained tokens of the per-token entropy (for the `actor/entropy` metric). */
  entropySum: 'entropy_sum',
  metric: (name: string) => `metric/${name}`,
  gradient: (weight: string) => `grad/${weight}`,
} as const;

export interface TrainingGraphOptions {
  /** The micro-batch totals the loss normalizes by (constants of this graph). */
  totals: LossTotals;
  /** Compute the per-token entropy (the loss asks for it, or the entropy metric is on). */
  withEntropy: boolean;
  /** Feed reference log-probs (the loss has a KL term). */
  withReference: boolean;
}

export interface TrainingGraph {
  model: Uint8Array;
  /** Metric names of the loss, each an output `metric/<name>`. */
  metrics: string[];
}

/**
 * Writes a training graph: the score graph's forward (`writeDecoderForward` + `writeScoreHead`, shared with the
 * inference graphs), `loss.compute` over `onnxTensorOps` on the loss inputs `old_log_probs`, `advantages`,
 * `response_mask` (and `ref_log_probs`), all `[batch, responses]`, and one gradient output `grad/<weight>` per
 * weight, next to `loss` and the loss's metrics. `weights` are the Hugging Face tensors (their names and shapes).
 */
export function buildTrainingGraph(
  config: DecoderConfig,
  weights: Map<string, WeightTensor>,
  loss: LossFunction,
  options: TrainingGraphOptions,
): TrainingGraph {
  const g = new DifferentiableGraph(`drmas-${config.modelType}-train`);
  const inputs = new Map<string, string>();
  for (const [name, t] of weights) inputs.set(name, g.input(name, 'float', t.shape));
  const hf = (name: string): string => {
    const value = inputs.get(name);
    if (!value) throw new Error(`buildTrainingGraph: weight '${name}' is missing`);
    return value;
  };
  // The graph weights are derived in the graph from the Hugging Face tensors (transposed, fused), so gradients come
  // out per Hugging Face tensor; a tied embedding's one gradient sums its two uses.
  const sources = graphWeightSources(config);
  const derived = new Map<string, string>();
  const w = (name: string): string => {
    let value = derived.get(name);
    if (!value) {
      const source = sources.get(name);
      if (!source) throw new Error(`buildTrainingGraph: no graph weight '${name}'`);
      const parts = source.parts.map((p) => (source.transpose ? g.op('Transpose', [hf(p)], { perm: [1, 0] }) : hf(p)));
      value = parts.length === 1 ? parts[0]! : g.op('Concat', parts, { axis: source.transpose ? 1 : 0 });
      derived.set(name, value);
    }
    return value;
  };
  const forward = writeDecoderForward(g, config, 'score', w);
  const head = writeScoreHead(g, config, forward, w);
  const column = (name: string) => g.input(name, 'float', ['batch', 'responses']);
  const n = TrainingNames;
  const responseMask = column(n.responseMask);
  const input = {
    logProbs: head.logProbs,
    oldLogProbs: column(n.oldLogProbs),
    advantages: column(n.advantages),
    responseMask,
    refLogProbs: options.withReference ? column(n.refLogProbs) : undefined,
    entropy: options.withEntropy ? head.entropy() : undefined,
    totals: options.totals,
  };
  const out = loss.compute(onnxTensorOps(g), input);
  g.output(out.loss, n.loss, 'float', []);
  const metrics = Object.keys(out.metrics);
  for (const name of metrics) g.output(out.metrics[name]!, n.metric(name), 'float', []);
  if (input.entropy) {
    const masked = g.op('Mul', [g.stopGradient(input.entropy), responseMask]);
    g.output(g.op('ReduceSum', [masked], { keepdims: 0 }), n.entropySum, 'float', []);
  }
  const names = [...inputs.keys()];
  g.gradients(
    out.loss,
    names.map((name) => inputs.get(name)!),
  ).forEach((grad, i) => g.output(grad, n.gradient(names[i]!), 'float', weights.get(names[i]!)!.shape));
  return { model: g.builder.toModelProto(), metrics };
}
