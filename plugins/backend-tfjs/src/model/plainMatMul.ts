import * as tf from '@tensorflow/tfjs-core';

/** Swaps the last two axes (of a tensor of rank 2 or more). */
function swapLast(x: tf.Tensor): tf.Tensor {
  const perm = x.shape.map((_, i) => i);
  [perm[perm.length - 2], perm[perm.length - 1]] = [perm[perm.length - 1]!, perm[perm.length - 2]!];
  return tf.transpose(x, perm);
}

/**
 * `a @ b`. The wasm BatchMatMul kernel runs batched (rank > 2) products ~15x slower than the same products one
 * matrix at a time (those go to XNNPACK), so there large batched products are split into 2-D ones.
 */
function matMulKernel(a: tf.Tensor, b: tf.Tensor): tf.Tensor {
  if (a.rank <= 2 || a.rank !== b.rank || tf.getBackend() !== 'wasm') return tf.matMul(a, b);
  const batchShape = a.shape.slice(0, -2);
  if (batchShape.some((d, i) => d !== b.shape[i])) return tf.matMul(a, b);
  const m = a.shape[a.rank - 2]!;
  const k = a.shape[a.rank - 1]!;
  const n = b.shape[b.rank - 1]!;
  if (m * k * n < 1 << 16) return tf.matMul(a, b);
  const count = batchShape.reduce((x, y) => x * y, 1);
  return tf.tidy(() => {
    const as = tf.unstack(tf.reshape(a, [count, m, k]));
    const bs = tf.unstack(tf.reshape(b, [count, k, n]));
    return tf.reshape(tf.stack(as.map((x, i) => tf.matMul(x, bs[i]!))), [...batchShape, m, n]);
  });
}

/**
 * `a @ b` (batched over leading axes) whose gradients also multiply untransposed operands: tfjs's own matMul
 * gradient uses transposeA/transposeB, which the wasm kernel runs about 10x slower than an explicit transpose
 * followed by a plain product.
 */
const plainMatMulOp = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const a = args[0] as tf.Tensor;
  const b = args[1] as tf.Tensor;
  (args[2] as tf.GradSaveFunc)([a, b]);
  return {
    value: matMulKernel(a, b),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => [matMulKernel(dy, swapLast(saved[1]!)), matMulKernel(swapLast(saved[0]!), dy)],
  };
});

export function plainMatMul<T extends tf.Tensor>(a: T, b: tf.Tensor): T {
  return plainMatMulOp(a, b) as T;
}
