import type { AttributeValue, Dim } from '../onnx/GraphBuilder.js';
import type { DifferentiableGraph, NodeRecord, ValueInfo, ValueType } from './DifferentiableGraph.js';
import { broadcastShapes, normalizeAxis, product, quotient } from './SymbolicShape.js';

/**
 * One op's rules: `infer` gives its outputs' types and shapes from its inputs'; `vjp` writes the gradients of the
 * inputs flagged in `wanted` from the gradients of its outputs (`undefined`: that output does not reach the loss),
 * returning `undefined` for inputs it gives no gradient. An op without `vjp` is not differentiable (shapes,
 * comparisons); reaching one with a gradient is an error.
 */
export interface OpRule {
  infer: (node: NodeRecord, g: DifferentiableGraph) => ValueInfo[];
  vjp?: (node: NodeRecord, dy: (string | undefined)[], wanted: boolean[], g: DifferentiableGraph) => (string | undefined)[];
}

const INT64_MAX = Number.MAX_SAFE_INTEGER;
/** ONNX `TensorProto.DataType` -> the types tracked here. */
const CAST_TYPES: Record<number, ValueType> = { 1: 'float', 6: 'int32', 7: 'int64', 9: 'bool' };

function attr<T extends AttributeValue>(n: NodeRecord, name: string, fallback: T): T {
  return (n.attributes[name] as T | undefined) ?? fallback;
}

function numbers(values: Dim[] | undefined): number[] | undefined {
  return values?.every((v) => typeof v === 'number') ? values : undefined;
}

/** The known int64 values of input `i` (a constant), or undefined. */
function constantInput(n: NodeRecord, g: DifferentiableGraph, i: number): number[] | undefined {
  const name = n.inputs[i];
  return name ? numbers(g.info(name).values) : undefined;
}

/** The single output's gradient (a node with one output reaches the loss only through it). */
function one(dy: (string | undefined)[]): string {
  return dy[0]!;
}

const sameAsInput: OpRule['infer'] = (n, g) => [{ type: g.info(n.inputs[0]!).type, shape: g.shape(n.inputs[0]!) }];
const broadcastOf =
  (type?: ValueType): OpRule['infer'] =>
  (n, g) => [
    {
      type: type ?? g.info(n.inputs[0]!).type,
      shape: broadcastShapes(
        n.inputs.map((i) => g.shape(i)),
        g.unknown,
      ),
    },
  ];
const comparison: OpRule = { infer: broadcastOf('bool') };

/** Transposes the last two axes. */
function swapLast(g: DifferentiableGraph, x: string): string {
  const rank = g.shape(x).length;
  const perm = Array.from({ length: rank }, (_, i) => i);
  [perm[rank - 2], perm[rank - 1]] = [rank - 1, rank - 2];
  return g.op('Transpose', [x], { perm });
}

/** Reduced axes of a Reduce* node, normalized and sorted; all axes when none are given. */
function reducedAxes(n: NodeRecord, g: DifferentiableGraph): number[] {
  const rank = g.shape(n.inputs[0]!).length;
  const axes = n.opType === 'ReduceSum' ? (n.inputs[1] ? constantInput(n, g, 1) : []) : attr<number[]>(n, 'axes', []);
  if (axes === undefined) throw new Error(`${n.opType} '${n.outputs[0]}': axes must be constant to infer its shape`);
  if (axes.length === 0) return Array.from({ length: rank }, (_, i) => i);
  return axes.map((a) => normalizeAxis(a, rank)).sort((a, b) => a - b);
}

const reduceInfer: OpRule['infer'] = (n, g) => {
  const shape = g.shape(n.inputs[0]!);
  if (n.opType === 'ReduceSum' && n.inputs[1] && !constantInput(n, g, 1)) {
    // Axes chosen at run time (DifferentiableGraph.sumTo, which then states the shape).
    if (attr(n, 'keepdims', 1) !== 1) throw new Error(`ReduceSum '${n.outputs[0]}': run-time axes need keepdims`);
    return [{ type: g.info(n.inputs[0]!).type, shape: shape.map(() => g.unknown.next()) }];
  }
  const axes = reducedAxes(n, g);
  const keep = attr(n, 'keepdims', 1) === 1;
  const out = keep ? shape.map((d, i) => (axes.includes(i) ? 1 : d)) : shape.filter((_, i) => !axes.includes(i));
  return [{ type: g.info(n.inputs[0]!).type, shape: out }];
};

/** The output gradient of a Reduce* node broadcast back over the reduced axes (keepdims layout). */
function unreduced(n: NodeRecord, dy: string, g: DifferentiableGraph): string {
  if (attr(n, 'keepdims', 1) === 1) return dy;
  const axes = reducedAxes(n, g);
  return axes.length === g.shape(n.inputs[0]!).length ? dy : g.op('Unsqueeze', [dy, g.ints(axes)]);
}

function softmaxAxisIsLast(n: NodeRecord, g: DifferentiableGraph): void {
  const rank = g.shape(n.inputs[0]!).length;
  if (normalizeAxis(attr(n, 'axis', -1), rank) !== rank - 1) throw new Error(`${n.opType}: only the last axis is differentiable here`);
}

/** Slice bounds of input `i` as they apply to axis `k` of the slice. */
function sliceBound(g: DifferentiableGraph, n: NodeRecord, i: number, k: number, count: number): string {
  const name = n.inputs[i]!;
  return count === 1 ? name : g.op('Slice', [name, g.ints([k]), g.ints([k + 1])]);
}

/** Max / Min of two operands: the gradient goes to `a` where `firstWins(a, b)`, else to `b`. */
function selectionVjp(firstWins: string): NonNullable<OpRule['vjp']> {
  return (n, dy, w, g) => {
    const [a, b] = n.inputs as [string, string];
    const toA = g.op('Cast', [g.op(firstWins, [a, b])], { to: 1 });
    return [
      w[0] ? g.sumTo(g.op('Mul', [one(dy), toA]), a) : undefined,
      w[1] ? g.sumTo(g.op('Mul', [one(dy), g.op('Sub', [g.scalar(1), toA])]), b) : undefined,
    ];
  };
}

export const OP_RULES: Record<string, OpRule> = {
  Identity: { infer: (n, g) => [g.info(n.inputs[0]!)], vjp: (_n, dy) => [one(dy)] },
  Cast: {
    infer: (n, g) => {
      const type = CAST_TYPES[attr(n, 'to', 1)];
      if (!type) throw new Error(`Cast to type ${JSON.stringify(n.attributes.to)} is not supported here`);
      return [{ ...g.info(n.inputs[0]!), type }];
    },
    vjp: (n, dy, _w, g) => [g.info(n.inputs[0]!).type === 'float' && g.info(n.outputs[0]!).type === 'float' ? one(dy) : undefined],
  },
  Add: { infer: broadcastOf(), vjp: (n, dy, w, g) => n.inputs.map((x, i) => (w[i] ? g.sumTo(one(dy), x) : undefined)) },
  Sub: {
    infer: broadcastOf(),
    vjp: (n, dy, w, g) => [
      w[0] ? g.sumTo(one(dy), n.inputs[0]!) : undefined,
      w[1] ? g.sumTo(g.op('Neg', [one(dy)]), n.inputs[1]!) : undefined,
    ],
  },
  Mul: {
    infer: broadcastOf(),
    vjp: (n, dy, w, g) => {
      const [a, b] = n.inputs as [string, string];
      return [w[0] ? g.sumTo(g.op('Mul', [one(dy), b]), a) : undefined, w[1] ? g.sumTo(g.op('Mul', [one(dy), a]), b) : undefined];
    },
  },
  Div: {
    infer: broadcastOf(),
    vjp: (n, dy, w, g) => {
      const [a, b] = n.inputs as [string, string];
      const y = n.outputs[0]!;
      return [
        w[0] ? g.sumTo(g.op('Div', [one(dy), b]), a) : undefined,
        w[1] ? g.sumTo(g.op('Neg', [g.op('Div', [g.op('Mul', [one(dy), y]), b])]), b) : undefined,
      ];
    },
  },
  Pow: {
    infer: broadcastOf(),
    vjp: (n, dy, w, g) => {
      const [a, b] = n.inputs as [string, string];
      const p = numbers(g.info(b).values);
      if (w[1] || !p || p.length !== 1) throw new Error('Pow is differentiable here only in its base, with a constant scalar exponent');
      const e = p[0]!;
      const slope = e === 2 ? g.op('Mul', [a, g.scalar(2)]) : g.op('Mul', [g.op('Pow', [a, g.scalar(e - 1)]), g.scalar(e)]);
      return [g.op('Mul', [one(dy), slope])];
    },
  },
  Neg: { infer: sameAsInput, vjp: (_n, dy, _w, g) => [g.op('Neg', [one(dy)])] },
  Exp: { infer: sameAsInput, vjp: (n, dy, _w, g) => [g.op('Mul', [one(dy), n.outputs[0]!])] },
  Log: { infer: sameAsInput, vjp: (n, dy, _w, g) => [g.op('Div', [one(dy), n.inputs[0]!])] },
  Sqrt: { infer: sameAsInput, vjp: (n, dy, _w, g) => [g.op('Div', [g.op('Mul', [one(dy), g.scalar(0.5)]), n.outputs[0]!])] },
  Reciprocal: {
    infer: sameAsInput,
    vjp: (n, dy, _w, g) => [g.op('Neg', [g.op('Mul', [one(dy), g.op('Mul', [n.outputs[0]!, n.outputs[0]!])])])],
  },
  Sigmoid: {
    infer: sameAsInput,
    vjp: (n, dy, _w, g) => {
      const y = n.outputs[0]!;
      return [g.op('Mul', [one(dy), g.op('Mul', [y, g.op('Sub', [g.scalar(1), y])])])];
    },
  },
  Abs: { infer: sameAsInput, vjp: (n, dy, _w, g) => [g.op('Mul', [one(dy), g.op('Sign', [n.inputs[0]!])])] },
  /** Piecewise constant: zero gradient. */
  Sign: { infer: sameAsInput, vjp: () => [undefined] },
  Softmax: {
    infer: sameAsInput,
    vjp: (n, dy, _w, g) => {
      softmaxAxisIsLast(n, g);
      const y = n.outputs[0]!;
      const dot = g.op('ReduceSum', [g.op('Mul', [one(dy), y]), g.ints([-1])], { keepdims: 1 });
      return [g.op('Mul', [y, g.op('Sub', [one(dy), dot])])];
    },
  },
  LogSoftmax: {
    infer: sameAsInput,
    vjp: (n, dy, _w, g) => {
      softmaxAxisIsLast(n, g);
      const total = g.op('ReduceSum', [one(dy), g.ints([-1])], { keepdims: 1 });
      return [g.op('Sub', [one(dy), g.op('Mul', [g.op('Exp', [n.outputs[0]!]), total])])];
    },
  },
  ReduceSum: {
    infer: reduceInfer,
    vjp: (n, dy, _w, g) => [g.op('Expand', [unreduced(n, one(dy), g), g.op('Shape', [n.inputs[0]!])])],
  },
  ReduceMean: {
    infer: reduceInfer,
    vjp: (n, dy, _w, g) => {
      const x = n.inputs[0]!;
      const count = product(reducedAxes(n, g).map((a) => g.shape(x)[a]!));
      const scale =
        typeof count === 'number'
          ? g.scalar(1 / count)
          : g.op('Div', [g.op('Cast', [g.op('Size', [n.outputs[0]!])], { to: 1 }), g.op('Cast', [g.op('Size', [x])], { to: 1 })]);
      return [g.op('Expand', [g.op('Mul', [unreduced(n, one(dy), g), scale]), g.op('Shape', [x])])];
    },
  },
  /** The gradient goes to every element equal to the maximum (as tfjs's `max` gradient). */
  ReduceMax: {
    infer: reduceInfer,
    vjp: (n, dy, _w, g) => {
      const x = n.inputs[0]!;
      const atMax = g.op('Cast', [g.op('Equal', [x, unreduced(n, n.outputs[0]!, g)])], { to: 1 });
      return [g.op('Mul', [atMax, unreduced(n, one(dy), g)])];
    },
  },
  /** Ties send the gradient to the first operand, as tfjs's `maximum`. */
  Max: { infer: broadcastOf(), vjp: selectionVjp('GreaterOrEqual') },
  /** Ties send the gradient to the first operand, as tfjs's `minimum`. */
  Min: { infer: broadcastOf(), vjp: selectionVjp('LessOrEqual') },
  /** The gradient passes where `min <= x <= max` (bounds included, as tfjs's `clipByValue`). */
  Clip: {
    infer: sameAsInput,
    vjp: (n, dy, w, g) => {
      if (w[1] || w[2]) throw new Error('Clip is differentiable here only in its input, with constant bounds');
      const [x, min, max] = n.inputs;
      const inside = [min ? g.op('GreaterOrEqual', [x!, min]) : undefined, max ? g.op('LessOrEqual', [x!, max]) : undefined].filter(
        (c): c is string => c !== undefined,
      );
      if (inside.length === 0) return [one(dy)];
      const mask = inside.length === 2 ? g.op('And', inside) : inside[0]!;
      return [g.op('Mul', [one(dy), g.op('Cast', [mask], { to: 1 })])];
    },
  },
  Where: {
    infer: (n, g) => [
      {
        type: g.info(n.inputs[1]!).type,
        shape: broadcastShapes(
          n.inputs.map((i) => g.shape(i)),
          g.unknown,
        ),
      },
    ],
    vjp: (n, dy, w, g) => {
      const [c, a, b] = n.inputs as [string, string, string];
      const zero = g.scalar(0);
      return [
        undefined,
        w[1] ? g.sumTo(g.op('Where', [c, one(dy), zero]), a) : undefined,
        w[2] ? g.sumTo(g.op('Where', [c, zero, one(dy)]), b) : undefined,
      ];
    },
  },
  Sum: { infer: broadcastOf(), vjp: (n, dy, w, g) => n.inputs.map((x, i) => (w[i] ? g.sumTo(one(dy), x) : undefined)) },
  Expand: {
    infer: (n, g) => {
      const target = g.info(n.inputs[1]!).values ?? Array.from({ length: g.shape(n.inputs[1]!)[0] as number }, () => g.unknown.next());
      return [{ type: g.info(n.inputs[0]!).type, shape: broadcastShapes([g.shape(n.inputs[0]!), target], g.unknown) }];
    },
    vjp: (n, dy, _w, g) => [g.sumTo(one(dy), n.inputs[0]!)],
  },
  MatMul: {
    infer: (n, g) => {
      const [a, b] = n.inputs.map((i) => g.shape(i)) as [Dim[], Dim[]];
      if (a.length < 2 || b.length < 2) throw new Error('MatMul: operands of rank 1 are not supported here');
      const batch = broadcastShapes([a.slice(0, -2), b.slice(0, -2)], g.unknown);
      return [{ type: 'float', shape: [...batch, a[a.length - 2]!, b[b.length - 1]!] }];
    },
    vjp: (n, dy, w, g) => {
      const [a, b] = n.inputs as [string, string];
      const d = one(dy);
      const as = g.shape(a);
      const bs = g.shape(b);
      const k = as[as.length - 1]!;
      const cols = bs[bs.length - 1]!;
      let db: string | undefined;
      if (w[1]) {
        // A shared [k, n] weight under a batched left operand: one product over all rows.
        db =
          bs.length === 2 && as.length > 2 && typeof k === 'number' && typeof cols === 'number'
            ? g.op('MatMul', [swapLast(g, g.op('Reshape', [a, g.ints([-1, k])])), g.op('Reshape', [d, g.ints([-1, cols])])])
            : g.sumTo(g.op('MatMul', [swapLast(g, a), d]), b);
      }
      return [w[0] ? g.sumTo(g.op('MatMul', [d, swapLast(g, b)]), a) : undefined, db];
    },
  },
  Transpose: {
    infer: (n, g) => {
      const shape = g.shape(n.inputs[0]!);
      const perm = attr(n, 'perm', [...shape.keys()].reverse());
      return [{ type: g.info(n.inputs[0]!).type, shape: perm.map((p) => shape[p]!) }];
    },
    vjp: (n, dy, _w, g) => {
      const rank = g.shape(n.inputs[0]!).length;
      const perm = attr(n, 'perm', [...Array(rank).keys()].reverse());
      const inverse = new Array<number>(rank);
      perm.forEach((p, i) => (inverse[p] = i));
      return [g.op('Transpose', [one(dy)], { perm: inverse })];
    },
  },
  Reshape: {
    infer: (n, g) => {
      const data = g.shape(n.inputs[0]!);
      const target = g.info(n.inputs[1]!).values;
      if (!target) {
        const rank = g.shape(n.inputs[1]!)[0];
        if (typeof rank !== 'number') throw new Error(`Reshape '${n.outputs[0]}': the rank of the target shape is unknown`);
        return [{ type: g.info(n.inputs[0]!).type, shape: Array.from({ length: rank }, () => g.unknown.next()) }];
      }
      const out = target.map((t, i) => (t === 0 ? data[i]! : t));
      const free = out.indexOf(-1);
      if (free >= 0) {
        const total = product(data);
        const rest = product(out.filter((_, i) => i !== free));
        out[free] = (total !== undefined && rest !== undefined ? quotient(total, rest) : undefined) ?? g.unknown.next();
      }
      return [{ type: g.info(n.inputs[0]!).type, shape: out, values: g.info(n.inputs[0]!).values }];
    },
    vjp: (n, dy, _w, g) => [g.op('Reshape', [one(dy), g.shapeOf(n.inputs[0]!)])],
  },
  Unsqueeze: {
    infer: (n, g) => {
      const shape = [...g.shape(n.inputs[0]!)];
      const axes = constantInput(n, g, 1);
      if (!axes) throw new Error('Unsqueeze: axes must be constant');
      const rank = shape.length + axes.length;
      for (const a of axes.map((x) => normalizeAxis(x, rank)).sort((x, y) => x - y)) shape.splice(a, 0, 1);
      return [{ type: g.info(n.inputs[0]!).type, shape }];
    },
    vjp: (n, dy, _w, g) => [g.op('Reshape', [one(dy), g.shapeOf(n.inputs[0]!)])],
  },
  Squeeze: {
    infer: (n, g) => {
      const shape = g.shape(n.inputs[0]!);
      const axes = constantInput(n, g, 1)?.map((a) => normalizeAxis(a, shape.length));
      if (!axes) throw new Error('Squeeze: axes must be constant');
      return [{ type: g.info(n.inputs[0]!).type, shape: shape.filter((_, i) => !axes.includes(i)) }];
    },
    vjp: (n, dy, _w, g) => [g.op('Reshape', [one(dy), g.shapeOf(n.inputs[0]!)])],
  },
  Slice: {
    infer: (n, g) => {
      const shape = [...g.shape(n.inputs[0]!)];
      const starts = constantInput(n, g, 1);
      const ends = constantInput(n, g, 2);
      const axes = n.inputs[3]
        ? constantInput(n, g, 3)
        : shape.map((_, i) => i).slice(0, starts?.length ?? (g.shape(n.inputs[1]!)[0] as number));
      const steps = n.inputs[4] ? constantInput(n, g, 4) : undefined;
      if (!axes) throw new Error('Slice: axes must be constant');
      axes.forEach((axis, k) => {
        const a = normalizeAxis(axis, shape.length);
        const bounds = sliceRange(shape[a]!, starts?.[k], ends?.[k], steps?.[k] ?? 1);
        shape[a] =
          bounds?.length ?? (starts?.[k] === 0 && ends?.[k] === INT64_MAX && (steps?.[k] ?? 1) === 1 ? shape[a]! : g.unknown.next());
      });
      return [{ type: g.info(n.inputs[0]!).type, shape }];
    },
    vjp: (n, dy, _w, g) => {
      const x = n.inputs[0]!;
      const shape = g.shape(x);
      const rank = shape.length;
      const starts = constantInput(n, g, 1);
      const ends = constantInput(n, g, 2);
      const axes = (n.inputs[3] ? constantInput(n, g, 3)! : shape.map((_, i) => i)).map((a) => normalizeAxis(a, rank));
      const count = starts?.length ?? (g.shape(n.inputs[1]!)[0] as number);
      const steps = n.inputs[4] ? constantInput(n, g, 4) : undefined;
      if (steps?.some((s) => s !== 1) || (n.inputs[4] && !steps)) throw new Error('Slice: only unit steps are differentiable here');
      const before: (string | number)[] = new Array<number>(rank).fill(0);
      const after: (string | number)[] = new Array<number>(rank).fill(0);
      for (let k = 0; k < count; k++) {
        const a = axes[k]!;
        const range = sliceRange(shape[a]!, starts?.[k], ends?.[k], 1);
        if (range) {
          before[a] = range.begin;
          after[a] = (shape[a] as number) - range.begin - range.length;
          continue;
        }
        // Bounds known only at run time: slicing the index range [0, dim) with the same bounds gives the kept
        // positions, with ONNX's own clamping of negative and out-of-range bounds.
        const dim = g.op('Gather', [g.op('Shape', [x]), g.ints([a], true)]);
        const kept = g.op('Slice', [
          g.op('Range', [g.ints([0], true), dim, g.ints([1], true)]),
          sliceBound(g, n, 1, k, count),
          sliceBound(g, n, 2, k, count),
          g.ints([0]),
        ]);
        const dim1 = g.op('Reshape', [dim, g.ints([1])]);
        const begin = g.op('ReduceMin', [g.op('Concat', [kept, dim1], { axis: 0 })], { keepdims: 1 });
        before[a] = begin;
        after[a] = g.op('Sub', [g.op('Sub', [dim1, begin]), g.op('Shape', [kept])]);
      }
      const pads = [...before, ...after];
      const padTensor = pads.every((p) => typeof p === 'number')
        ? g.ints(pads)
        : g.op(
            'Concat',
            pads.map((p) => (typeof p === 'number' ? g.ints([p]) : p)),
            { axis: 0 },
          );
      return [g.op('Pad', [one(dy), padTensor])];
    },
  },
  Concat: {
    infer: (n, g) => {
      const shapes = n.inputs.map((i) => g.shape(i));
      const axis = normalizeAxis(attr(n, 'axis', 0), shapes[0]!.length);
      const sizes = shapes.map((s) => s[axis]!);
      const shape = [...shapes[0]!];
      shape[axis] = sizes.every((s) => typeof s === 'number') ? sizes.reduce((a, b) => a + b, 0) : g.unknown.next();
      const parts = n.inputs.map((i) => g.info(i).values);
      const values = shape.length === 1 && parts.every((p) => p !== undefined) ? parts.flat() : undefined;
      return [{ type: g.info(n.inputs[0]!).type, shape, values: values }];
    },
    vjp: (n, dy, _w, g) => {
      const rank = g.shape(n.inputs[0]!).length;
      const axis = normalizeAxis(attr(n, 'axis', 0), rank);
      const sizes = n.inputs.map((i) => g.shape(i)[axis]!);
      const split = sizes.every((s) => typeof s === 'number')
        ? g.ints(sizes)
        : g.op(
            'Concat',
            n.inputs.map((i) => g.op('Gather', [g.op('Shape', [i]), g.ints([axis])])),
            { axis: 0 },
          );
      return g.opMulti('Split', [one(dy), split], { axis }, { outputs: n.inputs.length });
    },
  },
  Split: {
    infer: (n, g) => {
      const shape = g.shape(n.inputs[0]!);
      const axis = normalizeAxis(attr(n, 'axis', 0), shape.length);
      const sizes = constantInput(n, g, 1);
      return n.outputs.map((_, k) => {
        const s = [...shape];
        s[axis] = sizes?.[k] ?? g.unknown.next();
        return { type: g.info(n.inputs[0]!).type, shape: s };
      });
    },
    vjp: (n, dy, _w, g) => {
      const parts = n.outputs.map((o, k) => dy[k] ?? g.zerosLike(o));
      return [g.op('Concat', parts, { axis: attr(n, 'axis', 0) }), undefined];
    },
  },
  /**
   * `Y = op(A) op(B)` of 2-D operands (no C, alpha and beta 1), op a transposition where `transA` / `transB` say:
   * the `shared` weight layout's projection `Gemm(x, W, transB = 1)` gives `dx = dY W` and `dW = dY^T x`, already in
   * W's `[out, in]` layout.
   */
  Gemm: {
    infer: (n, g) => {
      const [a, b] = n.inputs.map((i) => g.shape(i)) as [Dim[], Dim[]];
      const rows = attr(n, 'transA', 0) ? a[1]! : a[0]!;
      const cols = attr(n, 'transB', 0) ? b[0]! : b[1]!;
      return [{ type: 'float', shape: [rows, cols] }];
    },
    vjp: (n, dy, w, g) => {
      if (n.inputs.length > 2 || attr<number>(n, 'alpha', 1) !== 1)
        throw new Error('Gemm: only C-less products with alpha 1 are differentiable here');
      const [a, b] = n.inputs as [string, string];
      const d = one(dy);
      const ta = attr<number>(n, 'transA', 0) === 1;
      const tb = attr<number>(n, 'transB', 0) === 1;
      const gemm = (x: string, y: string, transA: boolean, transB: boolean) =>
        g.op('Gemm', [x, y], { ...(transA && { transA: 1 }), ...(transB && { transB: 1 }) });
      // d op(A) = dY op(B)^T and d op(B) = op(A)^T dY, transposed back where the operand was.
      const da = () => (ta ? gemm(b, d, tb, true) : gemm(d, b, false, !tb));
      const db = () => (tb ? gemm(d, a, true, ta) : gemm(a, d, !ta, false));
      return [w[0] ? da() : undefined, w[1] ? db() : undefined];
    },
  },
  Gather: {
    infer: (n, g) => {
      const data = g.shape(n.inputs[0]!);
      const axis = normalizeAxis(attr(n, 'axis', 0), data.length);
      const shape = [...data.slice(0, axis), ...g.shape(n.inputs[1]!), ...data.slice(axis + 1)];
      const values = g.info(n.inputs[0]!).values;
      const index = constantInput(n, g, 1);
      const picked = values && index ? index.map((i) => values[i < 0 ? i + values.length : i]!) : undefined;
      return [{ type: g.info(n.inputs[0]!).type, shape, values: picked }];
    },
    /**
     * Embedding rows: a scatter-add of the output gradient into zeros (repeated ids add up), or the rows themselves
     * for the caller to add (`DifferentiableGraph.gradientsAndRows`).
     */
    vjp: (n, dy, _w, g) => {
      if (normalizeAxis(attr(n, 'axis', 0), g.shape(n.inputs[0]!).length) !== 0)
        throw new Error('Gather: only axis 0 is differentiable here');
      const [data, indices] = n.inputs as [string, string];
      if (g.takeRowGradient(data, indices, one(dy))) return [undefined, undefined];
      const at = g.op('Unsqueeze', [indices, g.ints([-1])]);
      return [g.op('ScatterND', [g.zerosLike(data), at, one(dy)], { reduction: 'add' }), undefined];
    },
  },
  GatherElements: {
    infer: (n, g) => [{ type: g.info(n.inputs[0]!).type, shape: g.shape(n.inputs[1]!) }],
    vjp: (n, dy, _w, g) => {
      const [data, indices] = n.inputs as [string, string];
      return [g.op('ScatterElements', [g.zerosLike(data), indices, one(dy)], { axis: attr(n, 'axis', 0), reduction: 'add' }), undefined];
    },
  },
  Shape: { infer: (n, g) => [{ type: 'int64', shape: [g.shape(n.inputs[0]!).length], values: g.shape(n.inputs[0]!) }] },
  Size: { infer: () => [{ type: 'int64', shape: [] }] },
  ConstantOfShape: {
    infer: (n, g) => {
      const values = g.info(n.inputs[0]!).values;
      const rank = g.shape(n.inputs[0]!)[0] as number;
      return [{ type: 'float', shape: values ?? Array.from({ length: rank }, () => g.unknown.next()) }];
    },
  },
  Range: { infer: (n, g) => [{ type: g.info(n.inputs[0]!).type, shape: [g.unknown.next()] }] },
  NonZero: { infer: (n, g) => [{ type: 'int64', shape: [g.shape(n.inputs[0]!).length, g.unknown.next()] }] },
  ReduceMin: { infer: reduceInfer },
  Pad: {
    infer: (n, g) => {
      const shape = g.shape(n.inputs[0]!);
      const pads = constantInput(n, g, 1);
      return [
        {
          type: g.info(n.inputs[0]!).type,
          shape: shape.map((d, i) => {
            if (!pads) return g.unknown.next();
            const extra = pads[i]! + pads[i + shape.length]!;
            return extra === 0 ? d : typeof d === 'number' ? d + extra : g.unknown.next();
          }),
        },
      ];
    },
  },
  ScatterND: { infer: (n, g) => [g.info(n.inputs[0]!)] },
  ScatterElements: { infer: (n, g) => [g.info(n.inputs[0]!)] },
  Equal: comparison,
  Greater: comparison,
  Less: comparison,
  GreaterOrEqual: comparison,
  LessOrEqual: comparison,
  And: comparison,
  Not: { infer: sameAsInput },
};

/** The kept range of a unit-step slice of a dimension, when the dimension and bounds are known numbers. */
function sliceRange(
  dim: Dim,
  start: number | undefined,
  end: number | undefined,
  step: number,
): { begin: number; length: number } | undefined {
  if (typeof dim !== 'number' || start === undefined || end === undefined || step !== 1) return undefined;
  const clamp = (v: number) => Math.min(dim, Math.max(0, v < 0 ? v + dim : v));
  const begin = clamp(start);
  return { begin, length: Math.max(0, clamp(end) - begin) };
}
