import { describe, expect, test } from '@jest/globals';
import { hostGradients, hostTensor, hostTensorOps as ops, SeededRng, type HostTensor } from '@drmas/core';

/** Central finite differences of the scalar `f` at `values` (float64, step 1e-6). */
function finiteDifferences(f: (x: HostTensor) => HostTensor, values: number[], shape: number[]): number[] {
  const h = 1e-6;
  return values.map((_, i) => {
    const at = (delta: number) =>
      f(
        hostTensor(
          values.map((v, j) => (j === i ? v + delta : v)),
          shape,
        ),
      ).data[0]!;
    return (at(h) - at(-h)) / (2 * h);
  });
}

/** `f`'s gradient at `values` against finite differences, to 1e-6. */
function expectGradient(f: (x: HostTensor) => HostTensor, values: number[], shape: number[]): void {
  const x = hostTensor(values, shape);
  const [gradient] = hostGradients(f(x), [x]);
  const expected = finiteDifferences(f, values, shape);
  expect(gradient).toHaveLength(values.length);
  gradient!.forEach((g, i) => expect(g).toBeCloseTo(expected[i]!, 6));
}

const rng = new SeededRng(7);
/** `n` values drawn uniformly from [lo, hi). */
const uniform = (n: number, lo: number, hi: number) => Array.from({ length: n }, () => lo + (hi - lo) * rng.next());
const values = (t: HostTensor) => Array.from(t.data);

describe('hostTensorOps computes', () => {
  test("elementwise ops with numpy's broadcasting: [2, 3] against a row, a column and a scalar", () => {
    const a = hostTensor([1, 2, 3, 4, 5, 6], [2, 3]);
    expect(values(ops.add(a, hostTensor([10, 20, 30], [3])))).toEqual([11, 22, 33, 14, 25, 36]);
    expect(values(ops.sub(a, hostTensor([1, 2], [2, 1])))).toEqual([0, 1, 2, 2, 3, 4]);
    expect(values(ops.div(a, 2))).toEqual([0.5, 1, 1.5, 2, 2.5, 3]);
    expect(ops.mul(hostTensor([3], [1]), hostTensor([1, 2], [2, 1])).shape).toEqual([2, 1]);
    expect(values(ops.maximum(a, 3.5))).toEqual([3.5, 3.5, 3.5, 4, 5, 6]);
    expect(values(ops.clip(a, 2, 4))).toEqual([2, 2, 3, 4, 4, 4]);
    expect(values(ops.greater(a, 3))).toEqual([0, 0, 0, 1, 1, 1]);
    expect(() => ops.add(a, hostTensor([1, 2], [2]))).toThrow('shapes [2, 3] and [2] do not broadcast');
  });

  test('sums over everything or one axis, and reshapes (one size inferred)', () => {
    const a = hostTensor([1, 2, 3, 4, 5, 6], [2, 3]);
    expect(ops.sum(a)).toMatchObject({ shape: [], data: Float64Array.of(21) });
    expect(ops.sum(a, 1)).toMatchObject({ shape: [2], data: Float64Array.of(6, 15) });
    expect(ops.sum(a, 0)).toMatchObject({ shape: [3], data: Float64Array.of(5, 7, 9) });
    expect(ops.reshape(ops.sum(a, 1), [-1, 1]).shape).toEqual([2, 1]);
  });
});

describe('hostGradients agrees with finite differences', () => {
  const shape = [2, 3];
  const x = uniform(6, 0.2, 2);

  test.each<[string, (t: HostTensor) => HostTensor]>([
    ['add, sub, neg', (t) => ops.sum(ops.neg(ops.sub(ops.add(t, 3), ops.mul(t, t))))],
    ['mul, div by a tensor and a number', (t) => ops.sum(ops.div(ops.mul(t, ops.exp(t)), ops.add(t, 1)))],
    ['exp, log, square', (t) => ops.sum(ops.square(ops.log(ops.add(ops.exp(t), 1))))],
    ['abs away from 0', (t) => ops.sum(ops.abs(ops.sub(t, 5)))],
    ['a row broadcast against the rows', (t) => ops.sum(ops.mul(t, ops.reshape(ops.sum(t, 0), [1, 3])))],
    ['a column: each row divided by its sum', (t) => ops.sum(ops.square(ops.div(t, ops.reshape(ops.sum(t, 1), [-1, 1]))))],
    ['the same tensor read by several ops', (t) => ops.div(ops.sum(ops.mul(t, t)), ops.sum(t))],
  ])('%s', (_, f) => expectGradient(f, x, shape));

  test('maximum, minimum and clip send the gradient where their operand wins (away from ties)', () => {
    const mixed = [0.3, 1.7, 0.9, 1.2, 0.5, 1.9];
    expectGradient((t) => ops.sum(ops.mul(ops.maximum(t, ops.square(t)), ops.minimum(t, 1))), mixed, shape);
    expectGradient((t) => ops.sum(ops.mul(ops.clip(t, 0.8, 1.5), t)), mixed, shape);
  });

  test('at a tie the gradient follows the engines: maximum and minimum to their first operand, clip inside its closed bounds', () => {
    const t = hostTensor([1, 1], [2]);
    const one = hostTensor([1, 1], [2]);
    expect(hostGradients(ops.sum(ops.maximum(t, one)), [t, one]).map((g) => Array.from(g))).toEqual([
      [1, 1],
      [0, 0],
    ]);
    expect(hostGradients(ops.sum(ops.minimum(t, one)), [t, one]).map((g) => Array.from(g))).toEqual([
      [1, 1],
      [0, 0],
    ]);
    expect(Array.from(hostGradients(ops.sum(ops.clip(t, 0, 1)), [t])[0]!)).toEqual([1, 1]);
  });

  test('stopGradient, comparisons and constants pass no gradient; an input the output does not read gets zeros', () => {
    const t = hostTensor([2, 3], [2]);
    const unused = hostTensor([1, 1, 1], [3]);
    const output = ops.sum(ops.add(ops.mul(t, ops.stopGradient(t)), ops.greater(t, 2.5)));
    const [dt, du] = hostGradients(output, [t, unused]);
    expect(Array.from(dt!)).toEqual([2, 3]);
    expect(Array.from(du!)).toEqual([0, 0, 0]);
    expect(() => hostGradients(t, [t])).toThrow('give a scalar');
  });
});
