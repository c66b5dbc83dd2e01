import {
  GraphBuilder,
  type AttributeValue,
  type CustomVjp,
  type Dim,
  type ElementType,
  type Gradient,
  type GraphWriter,
  type OpOptions,
} from '../onnx/GraphBuilder.js';
import { canonicalDim, sameShape, UnknownDims } from './SymbolicShape.js';
import { OP_RULES } from './OpRules.js';

const INT64_MAX = Number.MAX_SAFE_INTEGER;

/** Element types of values inside a graph (comparisons give `bool`, which no graph input or output here has). */
export type ValueType = ElementType | 'bool';

/** What the graph knows of a value before running it. */
export interface ValueInfo {
  type: ValueType;
  shape: Dim[];
  /**
   * The elements, where known: int64 constants and shape tensors (`Shape`, `Concat` of them; symbolic dims
   * included), float scalar constants.
   */
  values?: Dim[];
}

/**
 * One recorded node. `stop` marks `stopGradient`'s Identity and the nodes of a `customGradient` group: no gradient
 * flows through them. `vjp` marks a group's record (not a node of the graph): its derivative is written by hand.
 */
export interface NodeRecord {
  opType: string;
  inputs: string[];
  outputs: string[];
  attributes: Record<string, AttributeValue>;
  stop?: boolean;
  vjp?: CustomVjp;
}

/**
 * The gradient of an embedding-like value that leaves the graph as rows instead of a scatter-add: row `n` of `rows`
 * (`[count, ...value's trailing dims]`) adds to row `indices[n]` (`[count]`, int64) of the value's gradient. The
 * caller adds them on the host, in index order: onnxruntime's CPU `ScatterND` with `reduction: add` parallelizes
 * over index rows without ordering them, so repeated ids summed on several threads differ between runs.
 */
export interface RowGradient {
  value: string;
  indices: string;
  rows: string;
}

/**
 * A `GraphWriter` that records every node with its inputs' and outputs' types and (symbolic) shapes, and writes the
 * reverse-mode derivative of a scalar with respect to chosen values as more nodes of the same graph
 * (`gradients`). Each op's shape rule and vector-Jacobian product live in one table, `OP_RULES`; an op without a
 * rule cannot be written here, and one without a VJP cannot be differentiated through.
 */
export class DifferentiableGraph implements GraphWriter {
  readonly builder: GraphBuilder;
  readonly unknown = new UnknownDims();
  private readonly infos = new Map<string, ValueInfo>();
  private readonly records: NodeRecord[] = [];
  /** While `gradients` runs: the values whose Gather gradients leave the graph as rows, and those rows. */
  private rowsOf: ReadonlySet<string> = new Set();
  private rowGradients: RowGradient[] = [];

  constructor(name: string) {
    this.builder = new GraphBuilder(name);
  }

  info(value: string): ValueInfo {
    const info = this.infos.get(value);
    if (!info) throw new Error(`DifferentiableGraph '${this.builder.name}': value '${value}' is not defined`);
    return info;
  }

  shape(value: string): Dim[] {
    return this.info(value).shape;
  }

  input(name: string, type: ElementType, shape: Dim[]): string {
    this.builder.input(name, type, shape);
    this.infos.set(name, { type, shape: shape.map(canonicalDim) });
    return name;
  }

  output(value: string, name: string, type: ElementType, shape: Dim[]): string {
    this.builder.output(value, name, type, shape);
    this.infos.set(name, this.info(value));
    return name;
  }

  /**
   * `into + value` (float, `shape`) as the graph output `name`: written by `value`'s own Gemm where it can be
   * (`GraphBuilder.addIntoProduct`: the product added into the output's buffer, no tensor of it allocated), else
   * an Add. The sum is the same but for the order in which MLAS adds the product's blocks of its inner dimension to
   * `into` (bit for bit the same where `into` is zero).
   */
  addedOutput(value: string, into: string, name: string, shape: Dim[]): string {
    if (!this.builder.addIntoProduct(value, into, name, 'float', shape))
      return this.output(this.op('Add', [into, value]), name, 'float', shape);
    this.infos.set(name, this.info(value));
    // The record follows its node, so that a later backward reads the Gemm as written (and refuses its C).
    const producer = this.records.find((n) => n.outputs.includes(value))!;
    producer.inputs = [...producer.inputs, into];
    producer.outputs = producer.outputs.map((o) => (o === value ? name : o));
    return name;
  }

  initializer(name: string, type: ElementType, shape: number[], data: Float32Array | Int32Array | BigInt64Array): string {
    this.builder.initializer(name, type, shape, data);
    const values = shape.length <= 1 && data.length <= 64 ? Array.from(data as ArrayLike<number | bigint>, Number) : undefined;
    this.infos.set(name, { type, shape: [...shape], values });
    return name;
  }

  ints(values: number[], scalar = false): string {
    const name = this.builder.ints(values, scalar);
    this.infos.set(name, { type: 'int64', shape: scalar ? [] : [values.length], values: [...values] });
    return name;
  }

  scalar(value: number): string {
    const name = this.builder.scalar(value);
    this.infos.set(name, { type: 'float', shape: [], values: [value] });
    return name;
  }

  op(opType: string, inputs: string[], attributes: Record<string, AttributeValue> = {}, options: OpOptions = {}): string {
    return this.opMulti(opType, inputs, attributes, options)[0]!;
  }

  opMulti(opType: string, inputs: string[], attributes: Record<string, AttributeValue> = {}, options: OpOptions = {}): string[] {
    return this.record({ opType, inputs, outputs: [], attributes }, options);
  }

  /** `a` as a constant for differentiation (an Identity that gradients do not pass). */
  stopGradient(a: string): string {
    return this.record({ opType: 'Identity', inputs: [a], outputs: [], attributes: {}, stop: true }, {})[0]!;
  }

  /**
   * Writes the group's nodes as constants for differentiation and records one entry from `inputs` to its outputs whose
   * derivative `vjp` writes (as a recomputation of what the group freed, rather than keeping it for the backward).
   */
  customGradient(inputs: string[], write: () => string[], vjp: CustomVjp): string[] {
    const first = this.records.length;
    const outputs = write();
    for (let k = first; k < this.records.length; k++) this.records[k] = { ...this.records[k]!, stop: true };
    this.records.push({ opType: 'CustomGradient', inputs, outputs, attributes: {}, vjp });
    return outputs;
  }

  private record(node: NodeRecord, options: OpOptions): string[] {
    const rule = OP_RULES[node.opType];
    if (!rule || options.domain) throw new Error(`DifferentiableGraph: no rule for op ${options.domain ?? ''}${node.opType}`);
    const outputs = this.builder.opMulti(node.opType, node.inputs, node.attributes, options);
    const recorded = { ...node, outputs };
    const infos = rule.infer(recorded, this);
    outputs.forEach((o, i) => {
      const info = infos[i];
      if (!info) throw new Error(`DifferentiableGraph: ${node.opType} inferred ${infos.length} outputs, not ${outputs.length}`);
      this.infos.set(o, { ...info, shape: info.shape.map(canonicalDim) });
    });
    this.records.push(recorded);
    return outputs;
  }

  /**
   * Writes the gradients of the scalar (or any-shaped: seeded with ones) `loss` with respect to each of `wrt`
   * (graph inputs or any float values), returning one value per entry: zeros where `loss` does not depend on it.
   * Contributions of a value used several times (a tied embedding) are summed.
   */
  gradients(loss: string, wrt: string[]): string[] {
    const { gradients } = this.gradientsAndRows(loss, wrt, new Set());
    return gradients.map((d, i) => (d === undefined ? this.zerosLike(wrt[i]!) : this.joined(d)));
  }

  /** A gradient as one value: `RowBlocks` concatenated along the rows. */
  joined(grad: Gradient): string {
    return typeof grad === 'string'
      ? grad
      : this.op(
          'Concat',
          grad.blocks.map((b) => b.value),
          { axis: 0 },
        );
  }

  /**
   * As `gradients`, except that the Gather (axis 0) gradients of the values in `rowsOf` are not scattered in the
   * graph but returned as `rows` for the caller to add; a value's entry in `gradients` is then the rest of its
   * gradient (a tied embedding's output-projection part), or undefined when nothing else contributes. With
   * `rowBlocks`, a value whose whole gradient a custom VJP wrote in `RowBlocks` gets them as they are.
   */
  gradientsAndRows(
    loss: string,
    wrt: string[],
    rowsOf: ReadonlySet<string>,
    { rowBlocks = false }: { rowBlocks?: boolean } = {},
  ): { gradients: (Gradient | undefined)[]; rows: RowGradient[] } {
    this.rowsOf = rowsOf;
    this.rowGradients = [];
    try {
      const gradients = this.writeBackward(loss, wrt, rowBlocks);
      return { gradients, rows: this.rowGradients };
    } finally {
      this.rowsOf = new Set();
      this.rowGradients = [];
    }
  }

  /**
   * Gather's VJP asks this first: when `data`'s row gradients leave the graph, records `dy`'s rows (flattened to
   * one per index) and returns true.
   */
  takeRowGradient(data: string, indices: string, dy: string): boolean {
    if (!this.rowsOf.has(data)) return false;
    const flat = this.op('Reshape', [indices, this.ints([-1])]);
    const trailing = this.shape(data).slice(1);
    const target = trailing.every((d) => typeof d === 'number')
      ? this.ints([-1, ...trailing])
      : this.op('Concat', [this.ints([-1]), this.op('Slice', [this.op('Shape', [data]), this.ints([1]), this.ints([INT64_MAX])])], {
          axis: 0,
        });
    const rows = this.op('Reshape', [dy, target]);
    this.rowGradients.push({ value: data, indices: flat, rows });
    return true;
  }

  private writeBackward(loss: string, wrt: string[], keepBlocks: boolean): (Gradient | undefined)[] {
    const forward = [...this.records];
    const requires = new Set(wrt);
    for (const n of forward) {
      if (n.stop || !n.inputs.some((i) => requires.has(i))) continue;
      for (const o of n.outputs) if (this.info(o).type === 'float') requires.add(o);
    }
    const needed = new Set([loss]);
    for (let k = forward.length - 1; k >= 0; k--) {
      const n = forward[k]!;
      if (n.outputs.some((o) => needed.has(o))) for (const i of n.inputs) if (i) needed.add(i);
    }

    const contributions = new Map<string, Gradient[]>();
    const add = (value: string, grad: Gradient) => contributions.set(value, [...(contributions.get(value) ?? []), grad]);
    const total = (value: string): string | undefined => {
      const parts = contributions.get(value);
      if (!parts) return undefined;
      if (parts.length === 1 && typeof parts[0] === 'string') return parts[0];
      const sum =
        parts.length === 1
          ? this.joined(parts[0]!)
          : this.op(
              'Sum',
              parts.map((p) => this.joined(p)),
            );
      contributions.set(value, [sum]);
      return sum;
    };
    add(loss, this.shape(loss).length === 0 ? this.scalar(1) : this.op('Expand', [this.scalar(1), this.op('Shape', [loss])]));

    for (let k = forward.length - 1; k >= 0; k--) {
      const n = forward[k]!;
      if (n.stop || !n.outputs.some((o) => needed.has(o) && requires.has(o))) continue;
      const dy = n.outputs.map(total);
      if (dy.every((d) => d === undefined)) continue;
      const wanted = n.inputs.map((i) => i !== '' && requires.has(i));
      if (!wanted.some(Boolean)) continue;
      const vjp = n.vjp ? (_n: NodeRecord, d: (string | undefined)[], w: boolean[]) => n.vjp!(d, w) : OP_RULES[n.opType]!.vjp;
      if (!vjp) throw new Error(`DifferentiableGraph: ${n.opType} has no gradient rule (producing '${n.outputs[0]}')`);
      const dx = vjp(n, dy, wanted, this);
      wanted.forEach((w, i) => {
        const d = dx[i];
        if (w && d !== undefined) add(n.inputs[i]!, d);
      });
    }
    return wrt.map((value) => {
      const parts = contributions.get(value);
      return keepBlocks && parts?.length === 1 ? parts[0] : total(value);
    });
  }

  zerosLike(value: string): string {
    return this.op('ConstantOfShape', [this.op('Shape', [value])]);
  }

  /** A shape tensor of `value`'s shape: a constant when all its dims are numbers, else `Shape(value)`. */
  shapeOf(value: string): string {
    const shape = this.shape(value);
    return shape.every((d) => typeof d === 'number') ? this.ints(shape) : this.op('Shape', [value]);
  }

  /**
   * `dy` summed over the axes that `target` was broadcast along, to `target`'s shape. Decided from the static
   * shapes where they say which axes broadcast, else at run time (axes where the target's size is 1 and dy's is not).
   */
  sumTo(dy: string, target: string): string {
    const ys = this.shape(dy);
    const ts = this.shape(target);
    if (sameShape(ys, ts)) return dy;
    if (ts.length === 0) return this.op('ReduceSum', [dy], { keepdims: 0 });
    const lead = ys.length - ts.length;
    if (lead < 0) throw new Error(`DifferentiableGraph.sumTo: gradient of rank ${ys.length} for a value of rank ${ts.length}`);
    const leading = Array.from({ length: lead }, (_, i) => i);
    const broadcast: number[] = [];
    let decided = true;
    ts.forEach((d, i) => {
      const yd = ys[lead + i]!;
      if (d === yd) return;
      if (d === 1) broadcast.push(lead + i);
      else if (typeof d === 'number' && typeof yd === 'number') throw new Error(`DifferentiableGraph.sumTo: ${d} vs ${yd}`);
      else decided = false;
    });
    let out = dy;
    if (!decided) {
      if (lead > 0) out = this.op('ReduceSum', [out, this.ints(leading)], { keepdims: 0 });
      const ones = this.ints([1]);
      const mask = this.op('And', [
        this.op('Equal', [this.op('Shape', [target]), ones]),
        this.op('Not', [this.op('Equal', [this.op('Shape', [out]), ones])]),
      ]);
      const axes = this.op('Reshape', [this.op('NonZero', [mask]), this.ints([-1])]);
      const summed = this.op('ReduceSum', [out, axes], { keepdims: 1, noop_with_empty_axes: 1 });
      this.infos.set(summed, { type: 'float', shape: ts });
      return summed;
    }
    if (broadcast.length === 0) return this.op('ReduceSum', [out, this.ints(leading)], { keepdims: 0 });
    out = this.op('ReduceSum', [out, this.ints([...leading, ...broadcast])], { keepdims: 1 });
    return lead === 0 ? out : this.op('Reshape', [out, this.shapeOf(target)]);
  }
}
