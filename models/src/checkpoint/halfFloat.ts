/**
 * IEEE 754 binary16 (F16) and bfloat16 (BF16) conversion to and from float32.
 * Encoders round to nearest, ties to even, like PyTorch's `.half()` / `.bfloat16()`.
 */

const f32Scratch = new Float32Array(1);
const u32Scratch = new Uint32Array(f32Scratch.buffer);

let f16Table: Float32Array | undefined;

/** All 65536 half-float values, built on first use (256 KiB). */
function halfTable(): Float32Array {
  if (f16Table === undefined) {
    const table = new Float32Array(65536);
    for (let h = 0; h < 65536; h++) table[h] = f16BitsToFloat(h);
    f16Table = table;
  }
  return f16Table;
}

/** Value of the half-float with bit pattern `bits` (0..0xFFFF). */
export function f16BitsToFloat(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa === 0 ? sign * Infinity : NaN;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/** Half-float bit pattern of `value`, first rounded to float32, then to half with ties to even. */
export function floatToF16Bits(value: number): number {
  f32Scratch[0] = value;
  return f32BitsToF16Bits(u32Scratch[0]!);
}

function f32BitsToF16Bits(x: number): number {
  const sign = (x >>> 16) & 0x8000;
  const exponent = (x >>> 23) & 0xff;
  const mantissa = x & 0x7fffff;
  if (exponent === 0xff) return mantissa === 0 ? sign | 0x7c00 : sign | 0x7e00 | (mantissa >>> 13);
  const e = exponent - 112; // rebias 127 -> 15
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    // Result is subnormal (or zero): the half mantissa counts units of 2^-24.
    const shift = 14 - e;
    if (shift > 24) return sign;
    const m = mantissa | 0x800000;
    let half = m >>> shift;
    const rest = m & ((1 << shift) - 1);
    const midpoint = 1 << (shift - 1);
    if (rest > midpoint || (rest === midpoint && (half & 1) === 1)) half++;
    return sign | half;
  }
  let result = sign | (e << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  // A carry out of the mantissa correctly bumps the exponent (up to infinity).
  if (rest > 0x1000 || (rest === 0x1000 && (result & 1) === 1)) result++;
  return result;
}

/** Value of the bfloat16 with bit pattern `bits` (0..0xFFFF). */
export function bf16BitsToFloat(bits: number): number {
  u32Scratch[0] = (bits & 0xffff) << 16;
  return f32Scratch[0]!;
}

/** bfloat16 bit pattern of `value` (float32 rounded to nearest, ties to even; NaN stays a quiet NaN). */
export function floatToBf16Bits(value: number): number {
  f32Scratch[0] = value;
  return f32BitsToBf16Bits(u32Scratch[0]!);
}

function f32BitsToBf16Bits(x: number): number {
  if ((x & 0x7f800000) === 0x7f800000 && (x & 0x7fffff) !== 0) return ((x >>> 16) | 0x40) & 0xffff;
  return ((x + 0x7fff + ((x >>> 16) & 1)) >>> 16) & 0xffff;
}

/** Decodes little-endian half-floats to float32. `bits` holds one 16-bit pattern per element. */
export function decodeF16(bits: Uint16Array): Float32Array {
  const table = halfTable();
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = table[bits[i]!]!;
  return out;
}

export function decodeBf16(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  const outBits = new Uint32Array(out.buffer);
  for (let i = 0; i < bits.length; i++) outBits[i] = bits[i]! << 16;
  return out;
}

export function encodeF16(values: Float32Array): Uint16Array {
  const inBits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = f32BitsToF16Bits(inBits[i]!);
  return out;
}

export function encodeBf16(values: Float32Array): Uint16Array {
  const inBits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = f32BitsToBf16Bits(inBits[i]!);
  return out;
}
