/**
 * bitsandbytes' blockwise 8-bit optimizer state (Dettmers et al., "8-bit Optimizers via Block-wise Quantization",
 * ICLR 2022; bitsandbytes 0.50.2's `AdamW8bit`): a tensor's values in blocks of 256, each value one byte, an index
 * into a map of 256 numbers in [-1, 1], and each block its largest absolute value (`absmax`). AdamW's first moment
 * uses the signed dynamic map, its second the unsigned one (bitsandbytes' `create_dynamic_map`, reproduced bit for bit
 * here: its float32 `linspace` and products). A value is stored as the map entry nearest to value / absmax, as
 * bitsandbytes' CUDA and PyTorch kernels store it; its CPU library rounds through a table of 65,536 bins first, which
 * merges the map's entries below 1.5e-5, and is not followed. Written here: no JavaScript library has these maps.
 */

import type { MomentPrecision } from '@drmas/core';

export const BLOCKWISE_BLOCK_SIZE = 256;
/** Tensors of fewer values keep float32 moments (bitsandbytes' `min_8bit_size`). */
export const BLOCKWISE_MIN_SIZE = 4096;

/** One tensor's values as map indices and each block's largest absolute value. */
export interface BlockwiseCodes {
  readonly codes: Uint8Array;
  readonly absmax: Float32Array;
}

const f32 = Math.fround;
/** The least absmax a block is scaled by (torch clamps it to 1e-38 in float32). */
export const BLOCKWISE_TINIEST_ABSMAX = f32(1e-38);

/** Whether a tensor of `size` values keeps its moments in 8 bits under `precision` (the rest keep float32). */
export function holdsBlockwise(size: number, precision: MomentPrecision): boolean {
  return precision === '8bit' && size >= BLOCKWISE_MIN_SIZE;
}

/** Blocks of a tensor of `size` values (the last one may be short). */
export function blockCount(size: number): number {
  return Math.ceil(size / BLOCKWISE_BLOCK_SIZE);
}

/** Zero codes for a tensor of `size` values: every value dequantizes to 0 (a fresh optimizer's moments). */
export function emptyBlockwiseCodes(size: number): BlockwiseCodes {
  return { codes: new Uint8Array(size), absmax: new Float32Array(blockCount(size)) };
}

/** torch.linspace(start, end, n) in float32 on the CPU: one fused multiply-add per value, from each end inward. */
function linspaceF32(start: number, end: number, n: number): Float32Array {
  const from = f32(start);
  const to = f32(end);
  const step = f32((to - from) / (n - 1));
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = i < n >> 1 ? f32(from + step * i) : f32(to - step * (n - 1 - i));
  return out;
}

function makeDynamicMap(signed: boolean): Float32Array {
  const exponentBits = 7;
  const data: number[] = [];
  for (let i = 0; i < exponentBits; i++) {
    const bounds = linspaceF32(0.1, 1, 2 ** (i + (signed ? 0 : 1)) + 1);
    const scale = f32(Number(`1e${i - (exponentBits - 1)}`));
    for (let j = 0; j + 1 < bounds.length; j++) {
      const mean = f32(bounds[j]! + bounds[j + 1]!) / 2;
      data.push(f32(scale * mean));
      if (signed) data.push(f32(-scale * mean));
    }
  }
  data.push(0, 1);
  return Float32Array.from(data).sort();
}

const maps: { signed?: Float32Array; unsigned?: Float32Array } = {};

/** The dynamic map of `create_dynamic_map(signed)`: 256 sorted float32 numbers in [-1, 1]. */
export function dynamicMap(signed: boolean): Float32Array {
  return signed ? (maps.signed ??= makeDynamicMap(true)) : (maps.unsigned ??= makeDynamicMap(false));
}

/**
 * A map's search structure: the float32 midpoints between its neighbouring entries (the bounds `torch.bucketize`
 * searches, two +Infinity after them) and, for each value of the top 16 bits of a float32 in [-1, 1] (sign, exponent
 * and 7 bits of mantissa), how many midpoints lie below every value with those bits. Neighbouring midpoints are at
 * least 0.7% apart and a bucket spans 0.78% of its values, so a value is at most two midpoints past its bucket's
 * start: two comparisons without a branch, where a binary search over 255 midpoints takes eight unpredictable ones.
 */
export interface MapSearch {
  readonly mids: Float32Array;
  readonly start: Uint8Array;
  /** One block's scaled values, and their bits (the quantizer's working space). */
  readonly scaled: Float32Array;
  readonly scaledBits: Uint32Array;
}

/** The top 16 bits of a float32 from 0 to 1 (1.0f is 0x3f800000) and of one from -0 to -1 (0x8000 above them). */
export const MAP_SEARCH_BUCKETS = 0x8000 + 0x3f81;

const searches = new WeakMap<Float32Array, MapSearch>();
/** The search structure of `map` (made once a map). */
export function mapSearch(map: Float32Array): MapSearch {
  let search = searches.get(map);
  if (search) return search;
  const mids = new Float32Array(map.length + 1).fill(Infinity);
  for (let i = 0; i + 1 < map.length; i++) mids[i] = f32(map[i]! + map[i + 1]!) / 2;
  const below = (x: number) => {
    let count = 0;
    while (mids[count]! < x) count++;
    return count;
  };
  const bits = new Uint32Array(1);
  const value = new Float32Array(bits.buffer);
  const start = new Uint8Array(MAP_SEARCH_BUCKETS);
  for (let bucket = 0; bucket < 0x3f81; bucket++) {
    bits[0] = bucket << 16;
    start[bucket] = below(value[0]!);
    // A negative value's bucket starts at its most negative member.
    bits[0] = ((0x8000 | bucket) << 16) | 0xffff;
    start[0x8000 | bucket] = below(value[0]!);
  }
  const scaled = new Float32Array(BLOCKWISE_BLOCK_SIZE);
  search = { mids, start, scaled, scaledBits: new Uint32Array(scaled.buffer) };
  searches.set(map, search);
  return search;
}

/**
 * Writes `values` (a whole number of blocks, or the tensor's tail) as codes into `out` from value `at` (a multiple of
 * 256): each block's absmax, then each value's scaled position clamped to [-1, 1] and the number of midpoints below
 * it (`torch.bucketize`, right=False: a value on a midpoint takes the lower entry). A full block scales by the float32
 * reciprocal of its absmax, the tensor's short last block divides by it (bitsandbytes' `quantize_blockwise`).
 */
export function quantizeBlockwise(values: Float32Array, map: Float32Array, out: BlockwiseCodes, at: number): void {
  const { mids, start: bucketStart, scaled, scaledBits } = mapSearch(map);
  const { codes, absmax } = out;
  for (let start = 0; start < values.length; start += BLOCKWISE_BLOCK_SIZE) {
    const end = Math.min(start + BLOCKWISE_BLOCK_SIZE, values.length);
    const n = end - start;
    let max = 0;
    for (let i = start; i < end; i++) {
      const a = Math.abs(values[i]!);
      if (a > max || a !== a) max = a;
    }
    absmax[(at + start) / BLOCKWISE_BLOCK_SIZE] = max;
    const divisor = Math.max(max, BLOCKWISE_TINIEST_ABSMAX);
    if (n === BLOCKWISE_BLOCK_SIZE) {
      const reciprocal = f32(1 / divisor);
      for (let i = 0; i < n; i++) scaled[i] = values[start + i]! * reciprocal;
    } else {
      for (let i = 0; i < n; i++) scaled[i] = values[start + i]! / divisor;
    }
    for (let i = 0; i < n; i++) {
      let x = scaled[i]!;
      if (x !== x) {
        codes[at + start + i] = 0;
        continue;
      }
      if (x < -1) x = scaled[i] = -1;
      else if (x > 1) x = scaled[i] = 1;
      let code = bucketStart[scaledBits[i]! >>> 16]!;
      code += +(mids[code]! < x);
      code += +(mids[code]! < x);
      while (mids[code]! < x) code++;
      codes[at + start + i] = code;
    }
  }
}

/** Writes the values of codes `[at, at + out.length)` into `out` (`at` a multiple of 256): each map entry times its block's absmax, in float32. */
export function dequantizeBlockwise(codes: BlockwiseCodes, map: Float32Array, out: Float32Array, at: number): void {
  const { codes: c, absmax } = codes;
  for (let start = 0; start < out.length; start += BLOCKWISE_BLOCK_SIZE) {
    const scale = absmax[(at + start) / BLOCKWISE_BLOCK_SIZE]!;
    const end = Math.min(start + BLOCKWISE_BLOCK_SIZE, out.length);
    for (let i = start; i < end; i++) out[i] = map[c[at + i]!]! * scale;
  }
}
