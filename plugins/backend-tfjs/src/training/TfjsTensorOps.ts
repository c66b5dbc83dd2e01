import * as tf from '@tensorflow/tfjs-core';
import type { TensorOps } from '@drmas/core';

const stopGradientOp = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => ({
  value: tf.clone(args[0] as tf.Tensor),
  gradFunc: (dy: tf.Tensor) => tf.zerosLike(dy),
}));

/** The loss-function tensor operations over tfjs tensors (differentiated by tfjs's autodiff). */
export const tfjsTensorOps: TensorOps<tf.Tensor> = {
  add: (a, b) => tf.add(a, b),
  sub: (a, b) => tf.sub(a, b),
  mul: (a, b) => tf.mul(a, b),
  div: (a, b) => tf.div(a, b),
  neg: (a) => tf.neg(a),
  exp: (a) => tf.exp(a),
  log: (a) => tf.log(a),
  abs: (a) => tf.abs(a),
  square: (a) => tf.square(a),
  minimum: (a, b) => tf.minimum(a, b),
  maximum: (a, b) => tf.maximum(a, b),
  clip: (a, min, max) => tf.clipByValue(a, min, max),
  greater: (a, b) => tf.cast(tf.greater(a, b), 'float32'),
  less: (a, b) => tf.cast(tf.less(a, b), 'float32'),
  sum: (a, axis) => (axis === undefined ? tf.sum(a) : tf.sum(a, axis)),
  reshape: (a, shape) => tf.reshape(a, [...shape]),
  stopGradient: (a) => stopGradientOp(a),
  scalar: (value) => tf.scalar(value, 'float32'),
};
