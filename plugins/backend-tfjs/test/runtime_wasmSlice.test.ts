import { describe, expect, test } from '@jest/globals';
import * as tf from '@tensorflow/tfjs-core';
import { selectRuntime } from '../src/index.js';

/** Runs `f` on the cpu backend (tfjs's reference kernels) and on the patched wasm backend; returns both results. */
async function onBoth(f: () => tf.Tensor | tf.Tensor[]): Promise<[number[][], number[][]]> {
  const run = () => tf.tidy(() => [f()].flat().map((t) => Array.from(t.dataSync())));
  await selectRuntime('cpu');
  const reference = run();
  await selectRuntime('wasm');
  await tf.setBackend('wasm');
  return [reference, run()];
}

describe('wasm Slice / Unpack kernels that read their input in place', () => {
  const x = () =>
    tf.tensor(
      Array.from({ length: 2 * 3 * 4 * 5 }, (_, i) => i * 0.5 - 7),
      [2, 3, 4, 5],
    );

  test.each([
    ['contiguous rows', [1, 0, 0, 0], [1, 3, 4, 5]],
    ['strided inner block', [0, 1, 1, 2], [2, 2, 3, 3]],
    ['last axis only', [0, 0, 0, 4], [-1, -1, -1, 1]],
    ['whole tensor', [0, 0, 0, 0], [-1, -1, -1, -1]],
    ['empty', [0, 0, 0, 0], [2, 0, 4, 5]],
  ])('slice: %s equals the cpu backend', async (_name, begin, size) => {
    const [reference, patched] = await onBoth(() => tf.slice(x(), begin, size));
    expect(patched).toEqual(reference);
  });

  test.each([0, 1, 2, 3])('unstack on axis %i equals the cpu backend', async (axis) => {
    const [reference, patched] = await onBoth(() => tf.unstack(x(), axis));
    expect(patched).toEqual(reference);
  });

  test('int32 slices and gradients through slice', async () => {
    const [reference, patched] = await onBoth(() => tf.slice(tf.reshape(tf.range(0, 60, 1, 'int32'), [3, 4, 5]), [1, 1, 0], [2, 2, 5]));
    expect(patched).toEqual(reference);
    const grads = await onBoth(() => tf.grad((t: tf.Tensor) => tf.sum(tf.square(tf.slice(t, [0, 1, 1, 0], [2, 2, 2, 5]))))(x()));
    expect(grads[1]).toEqual(grads[0]);
  });
});
