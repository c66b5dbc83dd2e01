import type { TensorOps } from './TensorOps.js';

/**
 * A float64 tensor on the host that remembers how it was computed, so that `hostGradients` can differentiate a loss
 * written over `TensorOps` without an engine: the client side of a remote trainer (the tinker backend's gradient with
 * respect to the log-probs), tests of a loss against its formula. Row-major; a scalar has shape `[]`.
 */
export interface HostTensor {
  readonly shape: readonly number[];
  readonly data: Float64Array;
  /** The operands it was computed from and how a gradient flows back to them (absent: a leaf or a constant). */
  readonly grad?: { inputs: readonly HostTensor[]; backward: (dy: Float64Array) => ReadonlyArray<Float64Array | undefined> };
}

/** A leaf tensor: `values` in row-major order with `shape` (a scalar: `[]`). */
export function hostTensor(values: ArrayLike<number>, shape: readonly number[] = [values.length]): HostTensor {
  if (size(shape) !== values.length) throw new Error(`${values.length} values do not fill shape [${shape.join(', ')}]`);
  return { shape: [...shape], data: Float64Array.from(values) };
}

function size(shape: readonly number[]): number {
  return shape.reduce((n, d) => n * d, 1);
}

function strides(shape: readonly number[]): number[] {
  const out = new Array<number>(shape.length);
  let stride = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    out[i] = stride;
    stride *= shape[i]!;
  }
  return out;
}

/** numpy's broadcast of two shapes, aligned at their last axes. */
function broadcastShape(a: readonly number[], b: readonly number[]): number[] {
  const rank = Math.max(a.length, b.length);
  return Array.from({ length: rank }, (_, i) => {
    const x = a[a.length - rank + i] ?? 1;
    const y = b[b.length - rank + i] ?? 1;
    if (x !== y && x !== 1 && y !== 1) throw new Error(`shapes [${a.join(', ')}] and [${b.join(', ')}] do not broadcast`);
    return Math.max(x, y);
  });
}

/** For each element of `shape`, the index of the element of `from` (broadcast to `shape`) it reads. */
function broadcastIndex(from: readonly number[], shape: readonly number[]): Int32Array {
  const out = new Int32Array(size(shape));
  const own = strides(from);
  const offset = shape.length - from.length;
  const position = new Array<number>(shape.length).fill(0);
  for (let i = 0; i < out.length; i++) {
    let index = 0;
    for (let axis = offset; axis < shape.length; axis++) {
      if (from[axis - offset] !== 1) index += position[axis]! * own[axis - offset]!;
    }
    out[i] = index;
    for (let axis = shape.length - 1; axis >= 0; axis--) {
      if (++position[axis]! < shape[axis]!) break;
      position[axis] = 0;
    }
  }
  return out;
}

/** A gradient over the broadcast shape summed back onto the operand it was read from. */
function sumTo(dy: Float64Array, index: Int32Array, length: number): Float64Array {
  const out = new Float64Array(length);
  for (let i = 0; i < dy.length; i++) out[index[i]!]! += dy[i]!;
  return out;
}

function constant(value: number): HostTensor {
  return { shape: [], data: Float64Array.of(value) };
}

function operand(value: HostTensor | number): HostTensor {
  return typeof value === 'number' ? constant(value) : value;
}

/**
 * An elementwise binary op with numpy broadcasting: `f` computes, `dfa`/`dfb` are the partial derivatives at (x, y)
 * (absent: not differentiable there, such as a comparison).
 */
function binary(f: (x: number, y: number) => number, dfa?: (x: number, y: number) => number, dfb?: (x: number, y: number) => number) {
  return (aIn: HostTensor, bIn: HostTensor | number): HostTensor => {
    const a = aIn;
    const b = operand(bIn);
    const shape = broadcastShape(a.shape, b.shape);
    const ia = broadcastIndex(a.shape, shape);
    const ib = broadcastIndex(b.shape, shape);
    const data = new Float64Array(size(shape));
    for (let i = 0; i < data.length; i++) data[i] = f(a.data[ia[i]!]!, b.data[ib[i]!]!);
    if (!dfa || !dfb) return { shape, data };
    const partial = (df: (x: number, y: number) => number, index: Int32Array, length: number) => (dy: Float64Array) => {
      const local = new Float64Array(dy.length);
      for (let i = 0; i < dy.length; i++) local[i] = dy[i]! * df(a.data[ia[i]!]!, b.data[ib[i]!]!);
      return sumTo(local, index, length);
    };
    const da = partial(dfa, ia, a.data.length);
    const db = partial(dfb, ib, b.data.length);
    return { shape, data, grad: { inputs: [a, b], backward: (dy) => [da(dy), db(dy)] } };
  };
}

/** An elementwise unary op whose derivative at x is `df(x, f(x))`. */
function unary(f: (x: number) => number, df: (x: number, y: number) => number) {
  return (a: HostTensor): HostTensor => {
    const data = a.data.map(f);
    return {
      shape: a.shape,
      data,
      grad: { inputs: [a], backward: (dy) => [dy.map((g, i) => g * df(a.data[i]!, data[i]!))] },
    };
  };
}

function sum(a: HostTensor, axis?: number): HostTensor {
  if (axis === undefined) {
    const total = a.data.reduce((s, x) => s + x, 0);
    return {
      shape: [],
      data: Float64Array.of(total),
      grad: { inputs: [a], backward: (dy) => [new Float64Array(a.data.length).fill(dy[0]!)] },
    };
  }
  const k = axis < 0 ? a.shape.length + axis : axis;
  if (k < 0 || k >= a.shape.length) throw new Error(`sum over axis ${axis} of a tensor of shape [${a.shape.join(', ')}]`);
  const shape = a.shape.filter((_, i) => i !== k);
  const index = broadcastIndex(
    a.shape.map((d, i) => (i === k ? 1 : d)),
    a.shape,
  );
  const data = sumTo(a.data, index, size(shape));
  return { shape, data, grad: { inputs: [a], backward: (dy) => [Float64Array.from(index, (i) => dy[i]!)] } };
}

function reshape(a: HostTensor, target: readonly number[]): HostTensor {
  const known = target.filter((d) => d !== -1).reduce((n, d) => n * d, 1);
  const shape = target.map((d) => (d === -1 ? a.data.length / known : d));
  if (!shape.every(Number.isInteger) || size(shape) !== a.data.length) {
    throw new Error(`cannot reshape [${a.shape.join(', ')}] to [${target.join(', ')}]`);
  }
  return { shape, data: a.data, grad: { inputs: [a], backward: (dy) => [dy] } };
}

const is = (condition: boolean) => (condition ? 1 : 0);

/**
 * `TensorOps` over `HostTensor`s, differentiable by `hostGradients`. Where an op is not smooth its gradient follows
 * the onnx engine's rules: `maximum`/`minimum` send it to `a` where `a >= b` (`a <= b`), `clip` passes it inside its
 * bounds (both included), `abs` has the sign (0 at 0).
 */
export const hostTensorOps: TensorOps<HostTensor> = {
  add: binary(
    (x, y) => x + y,
    () => 1,
    () => 1,
  ),
  sub: binary(
    (x, y) => x - y,
    () => 1,
    () => -1,
  ),
  mul: binary(
    (x, y) => x * y,
    (_, y) => y,
    (x) => x,
  ),
  div: binary(
    (x, y) => x / y,
    (_, y) => 1 / y,
    (x, y) => -x / (y * y),
  ),
  minimum: binary(
    Math.min,
    (x, y) => is(x <= y),
    (x, y) => is(x > y),
  ),
  maximum: binary(
    Math.max,
    (x, y) => is(x >= y),
    (x, y) => is(x < y),
  ),
  greater: binary((x, y) => is(x > y)),
  less: binary((x, y) => is(x < y)),
  neg: unary(
    (x) => -x,
    () => -1,
  ),
  exp: unary(Math.exp, (_, y) => y),
  log: unary(Math.log, (x) => 1 / x),
  abs: unary(Math.abs, Math.sign),
  square: unary(
    (x) => x * x,
    (x) => 2 * x,
  ),
  clip: (a, min, max) =>
    unary(
      (x) => Math.min(Math.max(x, min), max),
      (x) => is(x >= min && x <= max),
    )(a),
  sum,
  reshape,
  stopGradient: (a) => ({ shape: a.shape, data: a.data }),
  scalar: constant,
};

/**
 * The gradient of the scalar `output` with respect to each of `inputs` (tensors it was computed from), by reverse
 * accumulation over the ops that made it; an input it does not depend on gets zeros.
 */
export function hostGradients(output: HostTensor, inputs: readonly HostTensor[]): Float64Array[] {
  if (output.data.length !== 1) throw new Error(`the gradient of a tensor of shape [${output.shape.join(', ')}]: give a scalar`);
  // Every tensor reachable from the output, in an order where each comes after all that read it.
  const order: HostTensor[] = [];
  const seen = new Set<HostTensor>();
  const visit = (tensor: HostTensor) => {
    if (seen.has(tensor)) return;
    seen.add(tensor);
    for (const input of tensor.grad?.inputs ?? []) visit(input);
    order.push(tensor);
  };
  visit(output);
  const grads = new Map<HostTensor, Float64Array>([[output, Float64Array.of(1)]]);
  for (const tensor of order.reverse()) {
    const dy = grads.get(tensor);
    if (!dy || !tensor.grad) continue;
    tensor.grad.backward(dy).forEach((dx, i) => {
      if (!dx) return;
      const input = tensor.grad!.inputs[i]!;
      const sumSoFar = grads.get(input);
      if (!sumSoFar) grads.set(input, Float64Array.from(dx));
      else for (let j = 0; j < dx.length; j++) sumSoFar[j]! += dx[j]!;
    });
  }
  return inputs.map((input) => grads.get(input) ?? new Float64Array(input.data.length));
}
