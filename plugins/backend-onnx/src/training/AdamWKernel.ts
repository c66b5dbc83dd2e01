/**
 * AdamW's element-wise update in WebAssembly SIMD (four float32 lanes per instruction), over host buffers copied
 * through the module's memory in chunks that stay in the CPU's cache. Every operation is a single IEEE float32
 * operation rounded to nearest (WebAssembly forbids fusing and flushing denormals), so the result is bit for bit
 * what the scalar float32 formula gives (`HostAdamW`'s documented order), four to seven times faster than the same
 * loop in JavaScript, where each float32 rounding is a `Math.fround` of a double (bench/RESULTS.md). Written by hand:
 * the module is a few hundred bytes, and no library steps AdamW in place over buffers it does not own (tfjs's wasm
 * backend steps its own tensors only).
 *
 * `stepBlockwise` steps moments held in 8 bits (`optimizer.moments: 8bit`, `blockwise8bit.ts`) in the same module, a
 * block of 256 values at a time: the codes read through their map and scaled by the block's absmax, the same vector
 * update, the new absmax, and each value's code found as `quantizeBlockwise` finds it (the bucket table and at most
 * two comparisons; WebAssembly has no gather, so this part is scalar), bit for bit the JavaScript path's result.
 */

import {
  BLOCKWISE_BLOCK_SIZE,
  BLOCKWISE_TINIEST_ABSMAX,
  MAP_SEARCH_BUCKETS,
  dynamicMap,
  mapSearch,
  type BlockwiseCodes,
} from '@drmas/models';

/** The step's float32 scalars, in the order the kernel applies them. */
export interface AdamWScalars {
  /** beta1 and 1 - beta1: expAvg = expAvg * keep1 + g * take1. */
  keep1: number;
  take1: number;
  /** beta2 and 1 - beta2: expAvgSq = expAvgSq * keep2 + (g * g) * take2. */
  keep2: number;
  take2: number;
  /** sqrt(1 - beta2^t): denom = sqrt(expAvgSq) / bias2Sqrt + eps. */
  bias2Sqrt: number;
  eps: number;
  /** 1 - lr * weightDecay (1 without decay: p * 1 is p). */
  shrink: number;
  /** lr / (1 - beta1^t): p = p * shrink - (expAvg / denom) * stepSize. */
  stepSize: number;
}

/** Elements per array a kernel call takes: four arrays of 64 KiB, in the L2 cache of any current x86 or Arm core. */
const CHUNK = 16384;
const CHUNK_BYTES = CHUNK * 4;
/** Where each array's chunk sits in the module's memory (float32 moments). */
const AT = { weights: 0, grads: CHUNK_BYTES, expAvg: 2 * CHUNK_BYTES, expAvgSq: 3 * CHUNK_BYTES };
const BLOCKS = CHUNK / BLOCKWISE_BLOCK_SIZE;
/** Where 8-bit moments' chunk sits (over the float32 moments' place), and one block's dequantized moments. */
const AT8 = {
  codes1: 2 * CHUNK_BYTES,
  codes2: 2 * CHUNK_BYTES + CHUNK,
  absmax1: 2 * CHUNK_BYTES + 2 * CHUNK,
  absmax2: 2 * CHUNK_BYTES + 2 * CHUNK + 4 * BLOCKS,
  block1: 2 * CHUNK_BYTES + 2 * CHUNK + 8 * BLOCKS,
  block2: 2 * CHUNK_BYTES + 2 * CHUNK + 8 * BLOCKS + 4 * BLOCKWISE_BLOCK_SIZE,
};

/** Where one dynamic map's tables sit in the module's memory: its entries, the midpoints between them, the bucket starts. */
interface MapLayout {
  values: number;
  mids: number;
  start: number;
}

/** The signed and unsigned maps' places, after the chunk arrays (16-byte aligned), and the memory's end. */
function mapLayouts(): { maps: [MapLayout, MapLayout]; end: number } {
  let at = 4 * CHUNK_BYTES;
  const place = (bytes: number) => {
    const here = at;
    at += Math.ceil(bytes / 16) * 16;
    return here;
  };
  const layout = (): MapLayout => ({
    values: place(4 * MAP_ENTRIES),
    mids: place(4 * (MAP_ENTRIES + 1)),
    start: place(MAP_SEARCH_BUCKETS),
  });
  const maps: [MapLayout, MapLayout] = [layout(), layout()];
  return { maps, end: at };
}
const MAP_ENTRIES = 256;

type Step = (n: number, ...scalars: number[]) => void;

/** What this file uses of the WebAssembly JavaScript API (the project's TypeScript libs, ES2023 and Node's, leave it out). */
interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: { memory: { buffer: ArrayBuffer }; adamw: Step; adamw8bit: Step } };
}
declare const WebAssembly: WebAssemblyApi;

export class AdamWKernel {
  private readonly memory: Float32Array;
  private readonly bytes: Uint8Array;
  private readonly run: Step;
  private readonly run8bit: Step;
  private readonly maps: [MapLayout, MapLayout];
  private mapsWritten = false;

  constructor() {
    const layouts = mapLayouts();
    const { memory, adamw, adamw8bit } = new WebAssembly.Instance(new WebAssembly.Module(adamWModule(layouts))).exports;
    this.memory = new Float32Array(memory.buffer);
    this.bytes = new Uint8Array(memory.buffer);
    this.maps = layouts.maps;
    this.run = adamw;
    this.run8bit = adamw8bit;
  }

  /** Steps `weights` and the moments in place with `grads` (all of one length). */
  step(weights: Float32Array, grads: Float32Array, expAvg: Float32Array, expAvgSq: Float32Array, s: AdamWScalars): void {
    this.chunked(weights.length, s, this.run, [
      [weights, AT.weights, true],
      [grads, AT.grads, false],
      [expAvg, AT.expAvg, true],
      [expAvgSq, AT.expAvgSq, true],
    ]);
  }

  /**
   * Steps `weights` in place with `grads`, and the moments held in 8 bits (the first on the signed dynamic map, the
   * second on the unsigned one, as `HostAdamW` holds them): each block's codes and absmax replaced by the stepped
   * moments' ones.
   */
  stepBlockwise(weights: Float32Array, grads: Float32Array, expAvg: BlockwiseCodes, expAvgSq: BlockwiseCodes, s: AdamWScalars): void {
    this.writeMaps();
    this.chunked(weights.length, s, this.run8bit, [
      [weights, AT.weights, true],
      [grads, AT.grads, false],
      [expAvg.codes, AT8.codes1, true],
      [expAvgSq.codes, AT8.codes2, true],
      [expAvg.absmax, AT8.absmax1, true, BLOCKWISE_BLOCK_SIZE],
      [expAvgSq.absmax, AT8.absmax2, true, BLOCKWISE_BLOCK_SIZE],
    ]);
  }

  /**
   * Runs `kernel` over `length` values a chunk at a time: each array's part of the chunk copied to its place in the
   * module's memory (`per` values of the step to one of the array's, rounded up), and back where the kernel changes it.
   */
  private chunked(length: number, s: AdamWScalars, kernel: Step, arrays: [ChunkArray, number, boolean, number?][]): void {
    for (let start = 0; start < length; start += CHUNK) {
      const end = Math.min(start + CHUNK, length);
      const views = arrays.map(([array, at, changed, per = 1]) => {
        const [from, to] = [start / per, Math.ceil(end / per)];
        const place =
          array instanceof Float32Array ? this.memory.subarray(at / 4, at / 4 + to - from) : this.bytes.subarray(at, at + to - from);
        place.set(array.subarray(from, to));
        return { array, place, from, changed };
      });
      kernel(end - start, s.keep1, s.take1, s.keep2, s.take2, s.bias2Sqrt, s.eps, s.shrink, s.stepSize);
      for (const { array, place, from, changed } of views) if (changed) array.set(place, from);
    }
  }

  /** The maps' entries, midpoints and bucket starts, written into the module's memory before the first 8-bit step. */
  private writeMaps(): void {
    if (this.mapsWritten) return;
    this.maps.forEach((at, i) => {
      const values = dynamicMap(i === 0);
      const { mids, start } = mapSearch(values);
      this.memory.set(values, at.values / 4);
      this.memory.set(mids, at.mids / 4);
      this.bytes.set(start, at.start);
    });
    this.mapsWritten = true;
  }
}

type ChunkArray = Float32Array | Uint8Array;

// The module, encoded as the WebAssembly binary format specifies (https://webassembly.github.io/spec/core/binary/).
const I32 = 0x7f;
const F32 = 0x7d;
const V128_TYPE = 0x7b;
const op = {
  localGet: 0x20,
  localSet: 0x21,
  localTee: 0x22,
  i32Eqz: 0x45,
  i32Eq: 0x46,
  i32GtU: 0x4b,
  i32GeU: 0x4f,
  f32Ne: 0x5c,
  f32Lt: 0x5d,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  i32Shl: 0x74,
  i32ShrU: 0x76,
  f32Mul: 0x94,
  f32Div: 0x95,
  f32Max: 0x97,
  i32ReinterpretF32: 0xbc,
  select: 0x1b,
  block: 0x02,
  loop: 0x03,
  if: 0x04,
  else: 0x05,
  br: 0x0c,
  brIf: 0x0d,
  end: 0x0b,
  void: 0x40,
} as const;
/** SIMD instructions: the 0xfd prefix and the instruction's number (LEB128). */
const simd = (code: number): number[] => [0xfd, ...uleb(code)];
const v128Load = (offset: number): number[] => [...simd(0x00), 4, ...uleb(offset)];
const v128Store = (offset: number): number[] => [...simd(0x0b), 4, ...uleb(offset)];
const F32X4 = {
  splat: simd(0x13),
  extractLane: (lane: number) => [...simd(0x1f), lane],
  ne: simd(0x42),
  abs: simd(0xe0),
  sqrt: simd(0xe3),
  add: simd(0xe4),
  sub: simd(0xe5),
  mul: simd(0xe6),
  div: simd(0xe7),
  min: simd(0xe8),
  max: simd(0xe9),
  pmax: simd(0xeb),
};
const V128 = { or: simd(0x50), anyTrue: simd(0x53) };
const f32Load = (offset: number): number[] => [0x2a, 2, ...uleb(offset)];
const f32Store = (offset: number): number[] => [0x38, 2, ...uleb(offset)];
const i32Load8U = (offset: number): number[] => [0x2d, 0, ...uleb(offset)];
const i32Store8 = (offset: number): number[] => [0x3a, 0, ...uleb(offset)];
const i32Const = (value: number): number[] => [0x41, ...sleb(value)];
const f32Const = (value: number): number[] => [0x43, ...new Uint8Array(Float32Array.of(value).buffer)];

function uleb(value: number): number[] {
  const bytes: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    bytes.push(byte);
  } while (value !== 0);
  return bytes;
}

function sleb(value: number): number[] {
  const bytes: number[] = [];
  for (;;) {
    const byte = value & 0x7f;
    value >>= 7;
    if ((value === 0 && !(byte & 0x40)) || (value === -1 && byte & 0x40)) return [...bytes, byte];
    bytes.push(byte | 0x80);
  }
}

const vector = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];
const name = (text: string): number[] => vector([...text].map((c) => [c.charCodeAt(0)]));
const get = (i: number): number[] => [op.localGet, i];
const set = (i: number): number[] => [op.localSet, i];
/** `for (counter = from; counter < limit; counter += by) body`, limit, body and from as code. */
const forLoop = (counter: number, limit: number[], by: number, body: number[], from = i32Const(0)): number[] => [
  ...from,
  ...set(counter),
  ...[op.block, op.void, op.loop, op.void],
  ...[...get(counter), ...limit, op.i32GeU, op.brIf, 1],
  ...body,
  ...[...get(counter), ...i32Const(by), op.i32Add, ...set(counter)],
  ...[op.br, 0, op.end, op.end],
];

/** The locals of AdamW's vector update: the eight scalars splatted, the gradient and the two new moments. */
type VectorLocals = Record<keyof AdamWScalars | 'g' | 'expAvg' | 'expAvgSq', number>;

/** Splats parameters 1-8 (the scalars) into the vector locals. */
function splatScalars(v: VectorLocals): number[] {
  const order = [v.keep1, v.take1, v.keep2, v.take2, v.bias2Sqrt, v.eps, v.shrink, v.stepSize];
  return order.flatMap((local, k) => [...get(k + 1), ...F32X4.splat, ...set(local)]);
}

/**
 * Four lanes of AdamW: weights and gradients at byte `data + at.weights` / `data + at.grads`, the moments at
 * `moment + at.expAvg` / `moment + at.expAvgSq` (`data` and `moment` locals holding byte offsets).
 */
function vectorUpdate(v: VectorLocals, data: number, moment: number, at: typeof AT): number[] {
  return [
    [...get(data), ...v128Load(at.grads), ...set(v.g)],
    // expAvg = expAvg * keep1 + g * take1
    [...get(moment), ...v128Load(at.expAvg), ...get(v.keep1), ...F32X4.mul],
    [...get(v.g), ...get(v.take1), ...F32X4.mul, ...F32X4.add, ...set(v.expAvg)],
    // expAvgSq = expAvgSq * keep2 + (g * g) * take2
    [...get(moment), ...v128Load(at.expAvgSq), ...get(v.keep2), ...F32X4.mul],
    [...get(v.g), ...get(v.g), ...F32X4.mul, ...get(v.take2), ...F32X4.mul, ...F32X4.add, ...set(v.expAvgSq)],
    [...get(moment), ...get(v.expAvg), ...v128Store(at.expAvg)],
    [...get(moment), ...get(v.expAvgSq), ...v128Store(at.expAvgSq)],
    // p = p * shrink - (expAvg / (sqrt(expAvgSq) / bias2Sqrt + eps)) * stepSize, stored at the offset pushed first
    [...get(data), ...get(data), ...v128Load(at.weights), ...get(v.shrink), ...F32X4.mul],
    [...get(v.expAvg), ...get(v.expAvgSq), ...F32X4.sqrt, ...get(v.bias2Sqrt), ...F32X4.div, ...get(v.eps), ...F32X4.add],
    [...F32X4.div, ...get(v.stepSize), ...F32X4.mul, ...F32X4.sub, ...v128Store(at.weights)],
  ].flat();
}

/**
 * `adamw(n, keep1, take1, keep2, take2, bias2Sqrt, eps, shrink, stepSize)` over the first n elements of each chunk
 * (rounded up to four lanes; the lanes past n compute on stale values nobody reads).
 */
function adamWBody(): number[] {
  // Parameters 0 (n) and 1-8 (the scalars); locals 9 (byte offset), 10 (end), 11-21 (the vector update's).
  const [offset, end] = [9, 10];
  const v: VectorLocals = {
    keep1: 11,
    take1: 12,
    keep2: 13,
    take2: 14,
    bias2Sqrt: 15,
    eps: 16,
    shrink: 17,
    stepSize: 18,
    g: 19,
    expAvg: 20,
    expAvgSq: 21,
  };
  const body = [
    ...splatScalars(v),
    ...[...get(0), ...i32Const(2), op.i32Shl, ...set(end)],
    ...forLoop(offset, get(end), 16, vectorUpdate(v, offset, offset, AT)),
  ];
  return [
    ...vector([
      [2, I32],
      [11, V128_TYPE],
    ]),
    ...body,
    op.end,
  ];
}

/**
 * `adamw8bit(n, ...the same scalars)` over the first n values of the 8-bit chunk, a block of 256 at a time (the last
 * may be short): dequantize both moments into the block's place, step it as `adamw` does, then for each moment its
 * absmax (NaN if any value is, as torch's max) and each value's code: scaled by the float32 reciprocal of the absmax
 * (a short block divides by it), NaN to code 0, clamped to [-1, 1], the bucket of its top 16 bits, then past every
 * midpoint below it (`quantizeBlockwise`).
 */
function adamW8bitBody([signed, unsigned]: [MapLayout, MapLayout]): number[] {
  // Parameters 0 (n) and 1-8; locals: i32 9 (block start), 10 (block length), 11 (counter), 12 (block byte offset +
  // counter), 13 (code); f32 14 (absmax), 15 (divisor), 16 (x); v128 17-27 (the vector update's), 28 (lanes' |value|),
  // 29 (their largest), 30 (lanes that saw NaN), 31 (the scale), 32 and 33 (-1 and 1).
  const [base, length, i, data, code] = [9, 10, 11, 12, 13];
  const [absmax, divisor, x] = [14, 15, 16];
  const v: VectorLocals = {
    keep1: 17,
    take1: 18,
    keep2: 19,
    take2: 20,
    bias2Sqrt: 21,
    eps: 22,
    shrink: 23,
    stepSize: 24,
    g: 25,
    expAvg: 26,
    expAvgSq: 27,
  };
  const [lanes, most, nan, scale, low, high] = [28, 29, 30, 31, 32, 33];
  /** The byte offset of the block's absmax: base / 256 * 4. */
  const absmaxOffset = [...get(base), ...i32Const(6), op.i32ShrU];
  const dequantize = (codes: number, absmaxAt: number, map: MapLayout, out: number) => [
    ...[...absmaxOffset, ...f32Load(absmaxAt), ...set(absmax)],
    ...forLoop(i, get(length), 1, [
      ...[...get(i), ...i32Const(2), op.i32Shl],
      ...[...get(base), ...get(i), op.i32Add, ...i32Load8U(codes), ...i32Const(2), op.i32Shl, ...f32Load(map.values)],
      ...[...get(absmax), op.f32Mul, ...f32Store(out)],
    ]),
  ];
  const pastMidpoint = (map: MapLayout) => [
    ...[...get(code), ...get(code), ...i32Const(2), op.i32Shl, ...f32Load(map.mids), ...get(x), op.f32Lt, op.i32Add, ...set(code)],
  ];
  const scaleEach = (values: number, by: number[]) =>
    forLoop(i, i32Const(4 * BLOCKWISE_BLOCK_SIZE), 16, [
      ...[...get(i), ...get(i), ...v128Load(values), ...get(scale), ...by],
      ...[...get(low), ...F32X4.max, ...get(high), ...F32X4.min, ...v128Store(values)],
    ]);
  const quantize = (values: number, codes: number, absmaxAt: number, map: MapLayout) => [
    // A short block's lanes past its end zeroed, so that whole vectors find its absmax.
    ...forLoop(
      i,
      i32Const(BLOCKWISE_BLOCK_SIZE),
      1,
      [...get(i), ...i32Const(2), op.i32Shl, ...f32Const(0), ...f32Store(values)],
      get(length),
    ),
    // absmax: the lanes' largest |value| (pmax is one instruction; NaN is tracked apart and wins, as in torch's max).
    ...[...f32Const(0), ...F32X4.splat, op.localTee, most, ...set(nan)],
    ...forLoop(i, i32Const(4 * BLOCKWISE_BLOCK_SIZE), 16, [
      ...[...get(i), ...v128Load(values), ...F32X4.abs, ...set(lanes)],
      ...[...get(nan), ...get(lanes), ...get(lanes), ...F32X4.ne, ...V128.or, ...set(nan)],
      ...[...get(most), ...get(lanes), ...F32X4.pmax, ...set(most)],
    ]),
    ...[...[0, 1, 2, 3].flatMap((lane) => [...get(most), ...F32X4.extractLane(lane)]), op.f32Max, op.f32Max, op.f32Max, ...set(absmax)],
    ...[...f32Const(NaN), ...get(absmax), ...get(nan), ...V128.anyTrue, op.select, ...set(absmax)],
    ...[...absmaxOffset, ...get(absmax), ...f32Store(absmaxAt)],
    ...[...get(absmax), ...f32Const(BLOCKWISE_TINIEST_ABSMAX), op.f32Max, ...set(divisor)],
    // Each value scaled (by the reciprocal in a full block, divided in a short one) and clamped to [-1, 1], NaN kept.
    ...[...get(length), ...i32Const(BLOCKWISE_BLOCK_SIZE), op.i32Eq, op.if, op.void],
    ...[...f32Const(1), ...get(divisor), op.f32Div, ...F32X4.splat, ...set(scale), ...scaleEach(values, F32X4.mul)],
    ...[op.else, ...get(divisor), ...F32X4.splat, ...set(scale), ...scaleEach(values, F32X4.div), op.end],
    ...forLoop(i, get(length), 1, [
      // The code's address, then the code: 0 for NaN, else the value's bucket start moved past the midpoints below it.
      ...[...get(base), ...get(i), op.i32Add],
      ...[...get(i), ...i32Const(2), op.i32Shl, ...f32Load(values), op.localTee, x],
      ...[...get(x), op.f32Ne, op.if, I32, ...i32Const(0), op.else],
      ...[...get(x), op.i32ReinterpretF32, ...i32Const(16), op.i32ShrU, ...i32Load8U(map.start), ...set(code)],
      ...pastMidpoint(map),
      ...pastMidpoint(map),
      ...[op.block, op.void, op.loop, op.void],
      ...[...get(code), ...i32Const(2), op.i32Shl, ...f32Load(map.mids), ...get(x), op.f32Lt, op.i32Eqz, op.brIf, 1],
      ...[...get(code), ...i32Const(1), op.i32Add, ...set(code), op.br, 0, op.end, op.end],
      ...[...get(code), op.end, ...i32Store8(codes)],
    ]),
  ];
  const blockAt = { weights: AT.weights, grads: AT.grads, expAvg: AT8.block1, expAvgSq: AT8.block2 };
  const body = [
    ...splatScalars(v),
    ...[...f32Const(-1), ...F32X4.splat, ...set(low), ...f32Const(1), ...F32X4.splat, ...set(high)],
    ...forLoop(base, get(0), BLOCKWISE_BLOCK_SIZE, [
      // length = min(n - base, 256)
      ...[...i32Const(BLOCKWISE_BLOCK_SIZE), ...get(0), ...get(base), op.i32Sub, op.localTee, length],
      ...[...get(length), ...i32Const(BLOCKWISE_BLOCK_SIZE), op.i32GtU, op.select, ...set(length)],
      ...dequantize(AT8.codes1, AT8.absmax1, signed, AT8.block1),
      ...dequantize(AT8.codes2, AT8.absmax2, unsigned, AT8.block2),
      ...forLoop(i, [...get(length), ...i32Const(2), op.i32Shl], 16, [
        ...[...get(base), ...i32Const(2), op.i32Shl, ...get(i), op.i32Add, ...set(data)],
        ...vectorUpdate(v, data, i, blockAt),
      ]),
      ...quantize(AT8.block1, AT8.codes1, AT8.absmax1, signed),
      ...quantize(AT8.block2, AT8.codes2, AT8.absmax2, unsigned),
    ]),
  ];
  return [
    ...vector([
      [5, I32],
      [3, F32],
      [17, V128_TYPE],
    ]),
    ...body,
    op.end,
  ];
}

function adamWModule({ maps, end }: { maps: [MapLayout, MapLayout]; end: number }): Uint8Array {
  const pages = Math.ceil(end / 65536);
  const code = (body: number[]) => [...uleb(body.length), ...body];
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vector([[0x60, ...vector([[I32], ...Array.from({ length: 8 }, () => [F32])]), ...vector([])]])),
    ...section(3, vector([[0], [0]])),
    ...section(5, vector([[0x00, ...uleb(pages)]])),
    ...section(
      7,
      vector([
        [...name('adamw'), 0x00, 0],
        [...name('adamw8bit'), 0x00, 1],
        [...name('memory'), 0x02, 0],
      ]),
    ),
    ...section(10, vector([code(adamWBody()), code(adamW8bitBody(maps))])),
  ]);
}
