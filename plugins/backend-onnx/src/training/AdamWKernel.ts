/**
 * AdamW's element-wise update in WebAssembly SIMD (four float32 lanes per instruction), over host buffers copied
 * through the module's memory in chunks that stay in the CPU's cache. Every operation is a single IEEE float32
 * operation rounded to nearest (WebAssembly forbids fusing and flushing denormals), so the result is bit for bit
 * what the scalar float32 formula gives (`HostAdamW`'s documented order), four to seven times faster than the same
 * loop in JavaScript, where each float32 rounding is a `Math.fround` of a double (bench/RESULTS.md). Written by hand:
 * the module is a few hundred bytes, and no library steps AdamW in place over buffers it does not own (tfjs's wasm
 * backend steps its own tensors only).
 */

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
/** Where each array's chunk sits in the module's memory. */
const AT = { weights: 0, grads: CHUNK_BYTES, expAvg: 2 * CHUNK_BYTES, expAvgSq: 3 * CHUNK_BYTES };

/** What this file uses of the WebAssembly JavaScript API (the project's TypeScript libs, ES2023 and Node's, leave it out). */
interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: { memory: { buffer: ArrayBuffer }; adamw: (n: number, ...scalars: number[]) => void } };
}
declare const WebAssembly: WebAssemblyApi;

export class AdamWKernel {
  private readonly memory: Float32Array;
  private readonly run: (n: number, ...scalars: number[]) => void;

  constructor() {
    const { memory, adamw } = new WebAssembly.Instance(new WebAssembly.Module(adamWModule())).exports;
    this.memory = new Float32Array(memory.buffer);
    this.run = adamw;
  }

  /** Steps `weights` and the moments in place with `grads` (all of one length). */
  step(weights: Float32Array, grads: Float32Array, expAvg: Float32Array, expAvgSq: Float32Array, s: AdamWScalars): void {
    const mem = this.memory;
    const arrays = [
      [weights, AT.weights / 4],
      [grads, AT.grads / 4],
      [expAvg, AT.expAvg / 4],
      [expAvgSq, AT.expAvgSq / 4],
    ] as const;
    for (let start = 0; start < weights.length; start += CHUNK) {
      const end = Math.min(start + CHUNK, weights.length);
      for (const [array, at] of arrays) mem.set(array.subarray(start, end), at);
      this.run(end - start, s.keep1, s.take1, s.keep2, s.take2, s.bias2Sqrt, s.eps, s.shrink, s.stepSize);
      for (const [array, at] of arrays) if (array !== grads) array.set(mem.subarray(at, at + end - start), start);
    }
  }
}

// The module, encoded as the WebAssembly binary format specifies (https://webassembly.github.io/spec/core/binary/).
const I32 = 0x7f;
const F32 = 0x7d;
const V128 = 0x7b;
const op = {
  localGet: 0x20,
  localSet: 0x21,
  i32Const: 0x41,
  i32GeU: 0x4f,
  i32Add: 0x6a,
  i32Shl: 0x74,
  block: 0x02,
  loop: 0x03,
  br: 0x0c,
  brIf: 0x0d,
  end: 0x0b,
  void: 0x40,
} as const;
/** SIMD instructions: the 0xfd prefix and the instruction's number (LEB128). */
const simd = (code: number): number[] => [0xfd, ...uleb(code)];
const v128Load = (offset: number): number[] => [...simd(0x00), 4, ...uleb(offset)];
const v128Store = (offset: number): number[] => [...simd(0x0b), 4, ...uleb(offset)];
const F32X4 = { splat: simd(0x13), sqrt: simd(0xe3), add: simd(0xe4), sub: simd(0xe5), mul: simd(0xe6), div: simd(0xe7) };

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

const vector = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];
const name = (text: string): number[] => vector([...text].map((c) => [c.charCodeAt(0)]));

/**
 * `adamw(n, keep1, take1, keep2, take2, bias2Sqrt, eps, shrink, stepSize)` over the first n elements of each chunk
 * (rounded up to four lanes; the lanes past n compute on stale values nobody reads).
 */
function adamWModule(): Uint8Array {
  // Parameters 0 (n) and 1-8 (the scalars); locals 9 (byte offset), 10 (end), 11-18 (the scalars splatted), 19 (g),
  // 20 (expAvg), 21 (expAvgSq).
  const get = (i: number) => [op.localGet, i];
  const set = (i: number) => [op.localSet, i];
  const offset = 9;
  const end = 10;
  const scalar = (k: number) => 10 + k;
  const [keep1, take1, keep2, take2, bias2Sqrt, eps, shrink, stepSize] = [11, 12, 13, 14, 15, 16, 17, 18] as const;
  const g = 19;
  const expAvg = 20;
  const expAvgSq = 21;
  const body = [
    [1, 2, 3, 4, 5, 6, 7, 8].flatMap((k) => [...get(k), ...F32X4.splat, ...set(scalar(k))]),
    [...get(0), op.i32Const, 2, op.i32Shl, ...set(end)],
    [op.block, op.void, op.loop, op.void],
    [...get(offset), ...get(end), op.i32GeU, op.brIf, 1],
    [...get(offset), ...v128Load(AT.grads), ...set(g)],
    // expAvg = expAvg * keep1 + g * take1
    [...get(offset), ...v128Load(AT.expAvg), ...get(keep1), ...F32X4.mul],
    [...get(g), ...get(take1), ...F32X4.mul, ...F32X4.add, ...set(expAvg)],
    // expAvgSq = expAvgSq * keep2 + (g * g) * take2
    [...get(offset), ...v128Load(AT.expAvgSq), ...get(keep2), ...F32X4.mul],
    [...get(g), ...get(g), ...F32X4.mul, ...get(take2), ...F32X4.mul, ...F32X4.add, ...set(expAvgSq)],
    [...get(offset), ...get(expAvg), ...v128Store(AT.expAvg)],
    [...get(offset), ...get(expAvgSq), ...v128Store(AT.expAvgSq)],
    // p = p * shrink - (expAvg / (sqrt(expAvgSq) / bias2Sqrt + eps)) * stepSize, stored at the offset pushed first
    [...get(offset), ...get(offset), ...v128Load(AT.weights), ...get(shrink), ...F32X4.mul],
    [...get(expAvg), ...get(expAvgSq), ...F32X4.sqrt, ...get(bias2Sqrt), ...F32X4.div, ...get(eps), ...F32X4.add],
    [...F32X4.div, ...get(stepSize), ...F32X4.mul, ...F32X4.sub, ...v128Store(AT.weights)],
    [...get(offset), op.i32Const, 16, op.i32Add, ...set(offset)],
    [op.br, 0, op.end, op.end, op.end],
  ].flat();
  const locals = vector([
    [2, I32],
    [11, V128],
  ]);
  const code = [...locals, ...body];
  const pages = (4 * CHUNK_BYTES) / 65536;
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vector([[0x60, ...vector([[I32], ...Array.from({ length: 8 }, () => [F32])]), ...vector([])]])),
    ...section(3, vector([[0]])),
    ...section(5, vector([[0x00, ...uleb(pages)]])),
    ...section(
      7,
      vector([
        [...name('adamw'), 0x00, 0],
        [...name('memory'), 0x02, 0],
      ]),
    ),
    ...section(10, vector([[...uleb(code.length), ...code]])),
  ]);
}
