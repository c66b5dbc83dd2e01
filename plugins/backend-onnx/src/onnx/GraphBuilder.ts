import { ProtobufWriter } from './ProtobufWriter.js';

/** ONNX `TensorProto.DataType` values used here. */
export const DataType = { float: 1, int32: 6, int64: 7, float16: 10 } as const;
export type ElementType = keyof typeof DataType;

/** A dimension: a fixed size or a symbolic name (`batch`, `columns`). */
export type Dim = number | string;

/** Options of a node: its output names (or how many to generate) and its domain (default: the ONNX domain). */
export interface OpOptions {
  outputs?: string[] | number;
  domain?: string;
}

export type AttributeValue = number | string | number[] | { floats: number[] } | { float: number };

interface NodeSpec {
  opType: string;
  inputs: string[];
  outputs: string[];
  attributes: Record<string, AttributeValue>;
  domain: string;
}

interface ValueSpec {
  name: string;
  type: ElementType;
  shape: Dim[];
}

interface InitializerSpec extends ValueSpec {
  data: Float32Array | Int32Array | BigInt64Array;
}

/** Opset of the default ONNX domain the graphs are written for. */
export const OPSET = 17;
/** IR version 8 goes with opsets 14-18. */
const IR_VERSION = 8;

/**
 * What a graph-writing function needs: `GraphBuilder` writes plain graphs; `DifferentiableGraph` (training/) also
 * records each node's shapes so that it can emit the backward pass.
 */
export interface GraphWriter {
  input(name: string, type: ElementType, shape: Dim[]): string;
  output(value: string, name: string, type: ElementType, shape: Dim[]): string;
  initializer(name: string, type: ElementType, shape: number[], data: Float32Array | Int32Array | BigInt64Array): string;
  ints(values: number[], scalar?: boolean): string;
  scalar(value: number): string;
  op(opType: string, inputs: string[], attributes?: Record<string, AttributeValue>, options?: OpOptions): string;
  opMulti(opType: string, inputs: string[], attributes?: Record<string, AttributeValue>, options?: OpOptions): string[];
  /**
   * Writes a group of nodes (`write`, returning its outputs) whose derivative with respect to `inputs` is written by
   * `vjp` instead of through its nodes. A writer that does not differentiate just writes the group.
   */
  customGradient(inputs: string[], write: () => string[], vjp: CustomVjp): string[];
}

/**
 * The hand-written derivative of a node group: from the gradients of its outputs (`undefined` where an output does not
 * reach the loss), the gradients of the inputs flagged in `wanted` (`undefined` for none).
 */
export type CustomVjp = (dy: (string | undefined)[], wanted: boolean[]) => (Gradient | undefined)[];

/**
 * A gradient written as blocks of consecutive rows (axis 0), in order and covering every row: the output head's,
 * one block per vocabulary chunk. A trained weight's gradient stays in blocks, each added into its own slice of the
 * trainer's buffer, so no tensor of the whole weight's shape is made; elsewhere the blocks are concatenated.
 */
export interface RowBlocks {
  blocks: Array<{ start: number; value: string }>;
}

/** A value's gradient: one value, or `RowBlocks`. */
export type Gradient = string | RowBlocks;

/**
 * Collects the nodes, inputs, outputs and initializers of one ONNX graph and writes it as a ModelProto.
 * Node output names are generated (`name/0`, `name/1`, ...) unless given.
 */
export class GraphBuilder implements GraphWriter {
  private readonly nodes: NodeSpec[] = [];
  private readonly inputs: ValueSpec[] = [];
  private readonly outputs: ValueSpec[] = [];
  private readonly initializers: InitializerSpec[] = [];
  private readonly constants = new Map<string, string>();
  private readonly names = new Set<string>();
  private counter = 0;

  constructor(readonly name: string) {}

  input(name: string, type: ElementType, shape: Dim[]): string {
    this.claim(name);
    this.inputs.push({ name, type, shape });
    return name;
  }

  /** Declares `value` (a node output) as a graph output, renamed to `name` through an Identity when needed. */
  output(value: string, name: string, type: ElementType, shape: Dim[]): string {
    if (value !== name) this.op('Identity', [value], {}, { outputs: [name] });
    this.outputs.push({ name, type, shape });
    return name;
  }

  initializer(name: string, type: ElementType, shape: number[], data: Float32Array | Int32Array | BigInt64Array): string {
    this.claim(name);
    this.initializers.push({ name, type, shape, data });
    return name;
  }

  /** An int64 constant (shapes, axes, slice bounds), shared between nodes. */
  ints(values: number[], scalar = false): string {
    const key = `i64:${scalar ? 's' : ''}${values.join(',')}`;
    let name = this.constants.get(key);
    if (!name) {
      name = this.initializer(
        `const/${this.constants.size}`,
        'int64',
        scalar ? [] : [values.length],
        BigInt64Array.from(values.map(BigInt)),
      );
      this.constants.set(key, name);
    }
    return name;
  }

  /** A float32 scalar constant. */
  scalar(value: number): string {
    const key = `f32:${value}`;
    let name = this.constants.get(key);
    if (!name) {
      name = this.initializer(`const/${this.constants.size}`, 'float', [], Float32Array.of(value));
      this.constants.set(key, name);
    }
    return name;
  }

  customGradient(_inputs: string[], write: () => string[]): string[] {
    return write();
  }

  /** Adds a node and returns its first output. */
  op(opType: string, inputs: string[], attributes: Record<string, AttributeValue> = {}, options: OpOptions = {}): string {
    const [first] = this.opMulti(opType, inputs, attributes, options);
    if (first === undefined) throw new Error(`ONNX graph '${this.name}': ${opType} node has no output to return`);
    return first;
  }

  /** Adds a node and returns all its outputs. */
  opMulti(opType: string, inputs: string[], attributes: Record<string, AttributeValue> = {}, options: OpOptions = {}): string[] {
    const id = this.counter++;
    const outputs = Array.isArray(options.outputs)
      ? options.outputs
      : Array.from({ length: options.outputs ?? 1 }, (_, i) => `${opType}_${id}/${i}`);
    for (const o of outputs) this.claim(o);
    this.nodes.push({ opType, inputs, outputs, attributes, domain: options.domain ?? '' });
    return outputs;
  }

  /** The nodes' op types, in the order written (for inspection). */
  opTypes(): string[] {
    return this.nodes.map((n) => n.opType);
  }

  /**
   * Writes `c + value` as the graph output `name` with the Gemm that writes `value`, where that Gemm has no C, no
   * alpha and no other reader: the Gemm takes `c` as its C (beta 1, ONNX's default) and its output is the graph
   * output itself, so onnxruntime adds the product into the output's buffer (MLAS's beta = 1) instead of allocating
   * the product and adding it in a pass of its own. Returns false, changing nothing, for any other producer.
   */
  addIntoProduct(value: string, c: string, name: string, type: ElementType, shape: Dim[]): boolean {
    const node = this.nodes.find((n) => n.outputs.includes(value));
    if (
      !node ||
      node.opType !== 'Gemm' ||
      node.domain ||
      node.inputs.length !== 2 ||
      'alpha' in node.attributes ||
      'beta' in node.attributes
    )
      return false;
    if (this.outputs.some((o) => o.name === value) || this.nodes.some((n) => n.inputs.includes(value))) return false;
    this.claim(name);
    node.inputs = [...node.inputs, c];
    node.outputs = [name];
    this.outputs.push({ name, type, shape });
    return true;
  }

  private claim(name: string): void {
    if (this.names.has(name)) throw new Error(`ONNX graph '${this.name}': value name '${name}' is defined twice`);
    this.names.add(name);
  }

  /** The serialized ModelProto. */
  toModelProto(producer = 'drmas'): Uint8Array {
    const domains = new Set(this.nodes.map((n) => n.domain));
    const w = new ProtobufWriter();
    w.int(1, IR_VERSION);
    w.string(2, producer);
    w.message(7, (g) => this.writeGraph(g));
    w.message(8, (o) => o.string(1, '').int(2, OPSET));
    if (domains.has('com.microsoft')) w.message(8, (o) => o.string(1, 'com.microsoft').int(2, 1));
    return w.finish();
  }

  private writeGraph(g: ProtobufWriter): void {
    this.nodes.forEach((n, i) => g.message(1, (w) => writeNode(w, n, `${n.opType}_${i}`)));
    g.string(2, this.name);
    for (const t of this.initializers) g.message(5, (w) => writeTensor(w, t));
    for (const v of this.inputs) g.message(11, (w) => writeValueInfo(w, v));
    for (const v of this.outputs) g.message(12, (w) => writeValueInfo(w, v));
  }
}

function writeNode(w: ProtobufWriter, node: NodeSpec, name: string): void {
  for (const i of node.inputs) w.string(1, i);
  for (const o of node.outputs) w.string(2, o);
  w.string(3, name);
  w.string(4, node.opType);
  for (const [key, value] of Object.entries(node.attributes)) w.message(5, (a) => writeAttribute(a, key, value));
  if (node.domain) w.string(7, node.domain);
}

// AttributeProto.AttributeType
const FLOAT = 1;
const INT = 2;
const STRING = 3;
const FLOATS = 6;
const INTS = 7;

function writeAttribute(w: ProtobufWriter, name: string, value: AttributeValue): void {
  w.string(1, name);
  if (typeof value === 'number') {
    w.int(3, value).int(20, INT);
  } else if (typeof value === 'string') {
    w.string(4, value).int(20, STRING);
  } else if (Array.isArray(value)) {
    w.packedVarints(8, value).int(20, INTS);
  } else if ('floats' in value) {
    w.packedFloats(7, value.floats).int(20, FLOATS);
  } else {
    w.float(2, value.float).int(20, FLOAT);
  }
}

function writeTensor(w: ProtobufWriter, t: InitializerSpec): void {
  for (const d of t.shape) w.int(1, d as number);
  w.int(2, DataType[t.type]);
  w.string(8, t.name);
  w.bytes(9, new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
}

function writeValueInfo(w: ProtobufWriter, v: ValueSpec): void {
  w.string(1, v.name);
  w.message(2, (type) =>
    type.message(1, (tensor) => {
      tensor.int(1, DataType[v.type]);
      tensor.message(2, (shape) => {
        for (const d of v.shape) shape.message(1, (dim) => (typeof d === 'number' ? dim.int(1, d) : dim.string(2, d)));
      });
    }),
  );
}
