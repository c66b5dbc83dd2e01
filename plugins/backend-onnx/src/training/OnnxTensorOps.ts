import type { TensorOps } from '@drmas/core';
import type { DifferentiableGraph } from './DifferentiableGraph.js';

/**
 * The loss-function tensor operations as nodes of a differentiable ONNX graph: a value is a graph value name, so a
 * `LossFunction` written once over `TensorOps` emits its loss into the training graph, and `gradients` differentiates
 * it like the rest of the graph. Constants are float32 scalars, as tfjs's are.
 */
export function onnxTensorOps(g: DifferentiableGraph): TensorOps<string> {
  const operand = (b: string | number): string => (typeof b === 'number' ? g.scalar(b) : b);
  const binary = (opType: string) => (a: string, b: string | number) => g.op(opType, [a, operand(b)]);
  const indicator = (opType: string) => (a: string, b: string | number) => g.op('Cast', [g.op(opType, [a, operand(b)])], { to: 1 });
  return {
    add: binary('Add'),
    sub: binary('Sub'),
    mul: binary('Mul'),
    div: binary('Div'),
    neg: (a) => g.op('Neg', [a]),
    exp: (a) => g.op('Exp', [a]),
    log: (a) => g.op('Log', [a]),
    abs: (a) => g.op('Abs', [a]),
    square: (a) => g.op('Mul', [a, a]),
    minimum: binary('Min'),
    maximum: binary('Max'),
    clip: (a, min, max) => g.op('Clip', [a, g.scalar(min), g.scalar(max)]),
    greater: indicator('Greater'),
    less: indicator('Less'),
    sum: (a, axis) =>
      axis === undefined ? g.op('ReduceSum', [a], { keepdims: 0 }) : g.op('ReduceSum', [a, g.ints([axis])], { keepdims: 0 }),
    reshape: (a, shape) => g.op('Reshape', [a, g.ints([...shape])]),
    stopGradient: (a) => g.stopGradient(a),
    scalar: (value) => g.scalar(value),
  };
}
