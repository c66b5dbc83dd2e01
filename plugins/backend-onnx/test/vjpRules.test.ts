import { describe, expect, it } from '@jest/globals';
import { SeededRandom } from '@drmas/models';
import type { Dim } from '../src/onnx/GraphBuilder.js';
import { loadOnnxRuntime } from '../src/ExecutionProvider.js';
import { DifferentiableGraph } from '../src/training/DifferentiableGraph.js';
import * as R from './float64Reference.js';

/**
 * Every op's vector-Jacobian product, written by `DifferentiableGraph.gradients` and run on onnxruntime, against
 * central finite differences of a float64 JavaScript reference of the op: for a random cotangent `c`, the gradient
 * of `sum(op(x) * c)` with respect to each float input.
 */

interface InputSpec {
  shape: number[];
  /** The shape the graph declares (symbolic dims exercise the run-time broadcast and slice rules). */
  declared?: Dim[];
  /** int64 inputs (ids, indices, flags): fixed values, not differentiated. */
  ints?: number[];
  /** Range of the uniform random values of a float input (default [-1.5, 1.5]). */
  range?: [number, number];
}

interface Case {
  name: string;
  inputs: InputSpec[];
  build(g: DifferentiableGraph, x: string[]): string;
  /** The op in float64; `original` are the unperturbed inputs (for stopGradient). */
  reference(x: R.Nd[], original: R.Nd[]): R.Nd;
}

const f = (shape: number[], range?: [number, number], declared?: Dim[]): InputSpec => ({ shape, range, declared });
const ints = (shape: number[], values: number[], declared?: Dim[]): InputSpec => ({ shape, ints: values, declared });
const INT64_MAX = Number.MAX_SAFE_INTEGER;
const sigmoid = (v: number) => 1 / (1 + Math.exp(-v));
const positive: [number, number] = [0.5, 2];

const unary = (opType: string, fn: (v: number) => number, range?: [number, number]): Case => ({
  name: opType,
  inputs: [f([2, 3, 4], range)],
  build: (g, [x]) => g.op(opType, [x!]),
  reference: ([x]) => R.map([x!], fn),
});
const binary = (opType: string, fn: (a: number, b: number) => number, a: InputSpec, b: InputSpec, label = ''): Case => ({
  name: `${opType} ${JSON.stringify(a.declared ?? a.shape)} ${JSON.stringify(b.declared ?? b.shape)}${label}`,
  inputs: [a, b],
  build: (g, [x, y]) => g.op(opType, [x!, y!]),
  reference: ([x, y]) => R.map([x!, y!], fn),
});

const CASES: Case[] = [
  binary('Add', (a, b) => a + b, f([2, 3, 4]), f([3, 1])),
  binary('Add', (a, b) => a + b, f([4, 3], undefined, ['n', 3]), f([1, 3], undefined, ['k', 3]), ' (broadcast known only at run time)'),
  binary('Sub', (a, b) => a - b, f([2, 3]), f([3])),
  binary('Mul', (a, b) => a * b, f([2, 1, 4]), f([3, 1])),
  binary('Mul', (a, b) => a * b, f([2, 3]), f([])),
  binary('Div', (a, b) => a / b, f([2, 3]), f([2, 1], positive)),
  binary('Min', Math.min, f([2, 3]), f([3])),
  binary('Max', Math.max, f([2, 3]), f([2, 1])),
  unary('Neg', (v) => -v),
  unary('Exp', Math.exp),
  unary('Log', Math.log, positive),
  unary('Sqrt', Math.sqrt, positive),
  unary('Reciprocal', (v) => 1 / v, positive),
  unary('Sigmoid', sigmoid),
  unary('Abs', Math.abs),
  unary('Identity', (v) => v),
  {
    name: 'Pow 2 and 3',
    inputs: [f([3, 4])],
    build: (g, [x]) => g.op('Add', [g.op('Pow', [x!, g.scalar(2)]), g.op('Pow', [x!, g.scalar(3)])]),
    reference: ([x]) => R.map([x!], (v) => v ** 2 + v ** 3),
  },
  {
    name: 'Cast float to float',
    inputs: [f([3, 2])],
    build: (g, [x]) => g.op('Cast', [x!], { to: 1 }),
    reference: ([x]) => x!,
  },
  {
    name: 'Clip',
    inputs: [f([4, 5])],
    build: (g, [x]) => g.op('Clip', [x!, g.scalar(-0.5), g.scalar(0.7)]),
    reference: ([x]) => R.map([x!], (v) => Math.min(0.7, Math.max(-0.5, v))),
  },
  {
    name: 'Where (flags from int64 ids), broadcast branches',
    inputs: [ints([2, 3], [1, 0, 1, 0, 0, 1]), f([2, 3]), f([3])],
    build: (g, [c, a, b]) => g.op('Where', [g.op('Cast', [c!], { to: 9 }), a!, b!]),
    reference: ([c, a, b]) => R.map([c!, a!, b!], (k, x, y) => (k ? x : y)),
  },
  {
    name: 'Softmax (last axis)',
    inputs: [f([2, 3, 5])],
    build: (g, [x]) => g.op('Softmax', [x!], { axis: -1 }),
    reference: ([x]) => R.softmax(x!),
  },
  {
    name: 'LogSoftmax (last axis)',
    inputs: [f([4, 6])],
    build: (g, [x]) => g.op('LogSoftmax', [x!], { axis: -1 }),
    reference: ([x]) => R.softmax(x!, true),
  },
  {
    name: 'ReduceSum axis 1, keepdims 0',
    inputs: [f([2, 3, 4])],
    build: (g, [x]) => g.op('ReduceSum', [x!, g.ints([1])], { keepdims: 0 }),
    reference: ([x]) => R.reduce(x!, [1], false, 'sum'),
  },
  {
    name: 'ReduceSum all axes',
    inputs: [f([2, 3])],
    build: (g, [x]) => g.op('ReduceSum', [x!], { keepdims: 0 }),
    reference: ([x]) => R.reduce(x!, undefined, false, 'sum'),
  },
  {
    name: 'ReduceSum axis -1, keepdims 1',
    inputs: [f([3, 4])],
    build: (g, [x]) => g.op('ReduceSum', [x!, g.ints([-1])], { keepdims: 1 }),
    reference: ([x]) => R.reduce(x!, [-1], true, 'sum'),
  },
  {
    name: 'ReduceMean axis -1, keepdims 1',
    inputs: [f([3, 5])],
    build: (g, [x]) => g.op('ReduceMean', [x!], { axes: [-1], keepdims: 1 }),
    reference: ([x]) => R.reduce(x!, [-1], true, 'mean'),
  },
  {
    name: 'ReduceMean over a symbolic axis (count known at run time)',
    inputs: [f([4, 3], undefined, ['n', 3])],
    build: (g, [x]) => g.op('ReduceMean', [x!], { axes: [0], keepdims: 0 }),
    reference: ([x]) => R.reduce(x!, [0], false, 'mean'),
  },
  {
    name: 'ReduceMax axis 1, keepdims 0',
    inputs: [f([3, 5])],
    build: (g, [x]) => g.op('ReduceMax', [x!], { axes: [1], keepdims: 0 }),
    reference: ([x]) => R.reduce(x!, [1], false, 'max'),
  },
  {
    name: 'Reshape (constant shape)',
    inputs: [f([2, 3, 4])],
    build: (g, [x]) => g.op('Reshape', [x!, g.ints([6, 4])]),
    reference: ([x]) => R.reshape(x!, [6, 4]),
  },
  {
    name: 'Reshape (0 and -1 over a symbolic dim)',
    inputs: [f([2, 3, 4], undefined, ['b', 3, 4])],
    build: (g, [x]) => g.op('Reshape', [x!, g.ints([0, -1])]),
    reference: ([x]) => R.reshape(x!, [2, 12]),
  },
  {
    name: 'Transpose',
    inputs: [f([2, 3, 4])],
    build: (g, [x]) => g.op('Transpose', [x!], { perm: [2, 0, 1] }),
    reference: ([x]) => R.transpose(x!, [2, 0, 1]),
  },
  {
    name: 'Unsqueeze then Squeeze',
    inputs: [f([3, 4])],
    build: (g, [x]) =>
      g.op('Mul', [g.op('Unsqueeze', [x!, g.ints([1])]), g.op('Squeeze', [g.op('Unsqueeze', [x!, g.ints([0])]), g.ints([0])])]),
    reference: ([x]) => R.map([R.reshape(x!, [3, 1, 4]), x!], (a, b) => a * b),
  },
  {
    name: 'Slice (constant bounds)',
    inputs: [f([3, 8])],
    build: (g, [x]) => g.op('Slice', [x!, g.ints([2]), g.ints([6]), g.ints([-1])]),
    reference: ([x]) => R.slice(x!, -1, 2, 6),
  },
  {
    name: 'Slice (negative start, end past the dim)',
    inputs: [f([5, 3])],
    build: (g, [x]) => g.op('Slice', [x!, g.ints([-3]), g.ints([INT64_MAX]), g.ints([0])]),
    reference: ([x]) => R.slice(x!, 0, -3, INT64_MAX),
  },
  {
    name: 'Slice (bounds fed at run time, symbolic dims)',
    inputs: [f([2, 6, 3], undefined, ['b', 'c', 3]), ints([1], [1], [1]), ints([1], [4], [1])],
    build: (g, [x, s, e]) => g.op('Slice', [x!, s!, e!, g.ints([1])]),
    reference: ([x, s, e]) => R.slice(x!, 1, s!.data[0]!, e!.data[0]!),
  },
  {
    name: 'Concat (sizes known)',
    inputs: [f([2, 3]), f([2, 2])],
    build: (g, [a, b]) => g.op('Concat', [a!, b!], { axis: 1 }),
    reference: ([a, b]) => R.concat([a!, b!], 1),
  },
  {
    name: 'Concat (sizes known at run time)',
    inputs: [f([2, 3], undefined, ['r', 'p']), f([2, 2], undefined, ['r', 'q'])],
    build: (g, [a, b]) => g.op('Concat', [b!, a!], { axis: -1 }),
    reference: ([a, b]) => R.concat([b!, a!], -1),
  },
  {
    name: 'Split (one part used)',
    inputs: [f([2, 7])],
    build: (g, [x]) => g.opMulti('Split', [x!, g.ints([3, 4])], { axis: -1 }, { outputs: 2 })[0]!,
    reference: ([x]) => R.slice(x!, 1, 0, 3),
  },
  {
    name: 'Split (both parts used, swapped)',
    inputs: [f([2, 7])],
    build: (g, [x]) => {
      const [a, b] = g.opMulti('Split', [x!, g.ints([3, 4])], { axis: -1 }, { outputs: 2 });
      return g.op('Concat', [b!, a!], { axis: 1 });
    },
    reference: ([x]) => R.concat([R.slice(x!, 1, 3, 7), R.slice(x!, 1, 0, 3)], 1),
  },
  {
    name: 'Gather rows (repeated ids add up)',
    inputs: [f([5, 3]), ints([2, 4], [4, 0, 4, 2, 1, 4, 0, 3])],
    build: (g, [t, ids]) => g.op('Gather', [t!, ids!], { axis: 0 }),
    reference: ([t, ids]) => R.gatherRows(t!, ids!),
  },
  {
    name: 'GatherElements axis 1',
    inputs: [f([4, 6]), ints([4, 1], [5, 0, 2, 2])],
    build: (g, [x, idx]) => g.op('GatherElements', [x!, idx!], { axis: 1 }),
    reference: ([x, idx]) => R.gatherElements(x!, idx!, 1),
  },
  {
    name: 'Expand',
    inputs: [f([3, 1])],
    build: (g, [x]) => g.op('Expand', [x!, g.ints([2, 3, 4])]),
    reference: ([x]) => R.expand(x!, [2, 3, 4]),
  },
  {
    name: 'MatMul 2-D',
    inputs: [f([3, 4]), f([4, 5])],
    build: (g, [a, b]) => g.op('MatMul', [a!, b!]),
    reference: ([a, b]) => R.matmul(a!, b!),
  },
  {
    name: 'MatMul batched 4-D',
    inputs: [f([2, 2, 3, 4]), f([2, 2, 4, 3])],
    build: (g, [a, b]) => g.op('MatMul', [a!, b!]),
    reference: ([a, b]) => R.matmul(a!, b!),
  },
  {
    name: 'MatMul batched left operand, shared right operand',
    inputs: [f([2, 3, 4]), f([4, 5])],
    build: (g, [a, b]) => g.op('MatMul', [a!, b!]),
    reference: ([a, b]) => R.matmul(a!, b!),
  },
  {
    name: 'MatMul broadcast batch dims, transposed operand',
    inputs: [f([2, 1, 3, 4]), f([3, 5, 4])],
    build: (g, [a, b]) => g.op('MatMul', [a!, g.op('Transpose', [b!], { perm: [0, 2, 1] })]),
    reference: ([a, b]) => R.matmul(a!, R.transpose(b!, [0, 2, 1])),
  },
  ...(
    [
      [0, 0],
      [0, 1],
      [1, 0],
      [1, 1],
    ] as const
  ).map(([transA, transB]): Case => ({
    name: `Gemm transA ${transA} transB ${transB}`,
    inputs: [f(transA ? [4, 3] : [3, 4]), f(transB ? [5, 4] : [4, 5])],
    build: (g, [a, b]) => g.op('Gemm', [a!, b!], { transA, transB }),
    reference: ([a, b]) => R.matmul(transA ? R.transpose(a!, [1, 0]) : a!, transB ? R.transpose(b!, [1, 0]) : b!),
  })),
  {
    name: 'a value used three times (contributions summed)',
    inputs: [f([3, 4])],
    build: (g, [x]) => g.op('Add', [g.op('Mul', [x!, x!]), g.op('Exp', [x!])]),
    reference: ([x]) => R.map([x!], (v) => v * v + Math.exp(v)),
  },
  {
    name: 'stopGradient',
    inputs: [f([3, 4])],
    build: (g, [x]) => g.op('Mul', [x!, g.stopGradient(x!)]),
    reference: ([x], [x0]) => R.map([x!, x0!], (v, c) => v * c),
  },
  {
    name: 'RMSNorm (Pow, ReduceMean, Add, Sqrt, Div, Mul)',
    inputs: [f([3, 6]), f([6], positive)],
    build: (g, [x, w]) => {
      const variance = g.op('ReduceMean', [g.op('Pow', [x!, g.scalar(2)])], { axes: [-1], keepdims: 1 });
      return g.op('Mul', [g.op('Div', [x!, g.op('Sqrt', [g.op('Add', [variance, g.scalar(1e-6)])])]), w!]);
    },
    reference: ([x, w]) => {
      const rms = R.map(
        [
          R.reduce(
            R.map([x!], (v) => v * v),
            [-1],
            true,
            'mean',
          ),
        ],
        (v) => Math.sqrt(v + 1e-6),
      );
      return R.map([x!, rms, w!], (v, r, s) => (v / r) * s);
    },
  },
];

const STEP = 1e-5;

describe('VJP of each op vs central finite differences of a float64 reference', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const ort = await loadOnnxRuntime();
    const rng = new SeededRandom(CASES.indexOf(c) + 11);
    const inputs = c.inputs.map((spec) =>
      spec.ints
        ? R.nd(spec.shape, spec.ints)
        : R.nd(
            spec.shape,
            Array.from({ length: spec.shape.reduce((a, b) => a * b, 1) }, () => {
              const [lo, hi] = spec.range ?? [-1.5, 1.5];
              // float32-representable, so the graph and the reference see the same numbers.
              return Math.fround(lo + (hi - lo) * rng.uniform());
            }),
          ),
    );
    const y0 = c.reference(inputs, inputs);
    const cot = R.nd(
      y0.shape,
      Array.from(y0.data, () => Math.fround(rng.uniform() * 2 - 1)),
    );
    const loss = (x: R.Nd[]) => {
      const y = c.reference(x, inputs);
      return y.data.reduce((s, v, i) => s + v * cot.data[i]!, 0);
    };

    const g = new DifferentiableGraph('vjp');
    const names = c.inputs.map((spec, i) => g.input(`x${i}`, spec.ints ? 'int64' : 'float', spec.declared ?? spec.shape));
    const c0 = g.input('cotangent', 'float', y0.shape);
    const y = c.build(g, names);
    const total = g.op('ReduceSum', [g.op('Mul', [y, c0])], { keepdims: 0 });
    const floats = c.inputs.map((spec, i) => (spec.ints ? -1 : i)).filter((i) => i >= 0);
    const grads = g.gradients(
      total,
      floats.map((i) => names[i]!),
    );
    grads.forEach((grad, k) => g.output(grad, `grad${k}`, 'float', c.inputs[floats[k]!]!.declared ?? c.inputs[floats[k]!]!.shape));
    const session = await ort.InferenceSession.create(g.builder.toModelProto());
    const feeds: Record<string, InstanceType<typeof ort.Tensor>> = {
      cotangent: new ort.Tensor('float32', Float32Array.from(cot.data), cot.shape),
    };
    c.inputs.forEach((spec, i) => {
      const x = inputs[i]!;
      feeds[`x${i}`] = spec.ints
        ? new ort.Tensor(
            'int64',
            BigInt64Array.from(x.data, (v) => BigInt(v)),
            x.shape,
          )
        : new ort.Tensor('float32', Float32Array.from(x.data), x.shape);
    });
    const out = await session.run(feeds);
    await session.release();

    floats.forEach((i, k) => {
      const got = out[`grad${k}`]!.data as Float32Array;
      expect(got.length).toBe(inputs[i]!.data.length);
      let worst = 0;
      for (let e = 0; e < got.length; e++) {
        const shifted = (delta: number) =>
          inputs.map((x, j) => (j === i ? { shape: x.shape, data: x.data.map((v, m) => (m === e ? v + delta : v)) } : x));
        const fd = (loss(shifted(STEP)) - loss(shifted(-STEP))) / (2 * STEP);
        worst = Math.max(worst, Math.abs(got[e]! - fd) / Math.max(1, Math.abs(fd)));
      }
      expect(worst).toBeLessThan(1e-4);
    });
  });
});
