import {
  bf16BitsToFloat,
  decodeBf16,
  decodeF16,
  encodeBf16,
  encodeF16,
  f16BitsToFloat,
  floatToBf16Bits,
  floatToF16Bits,
} from '../src/checkpoint/halfFloat.js';

// Bit patterns worked out by hand from the IEEE 754 layouts:
// binary16 = 1 sign, 5 exponent (bias 15), 10 mantissa; bfloat16 = the top 16 bits of a float32.
describe('half-float decoding', () => {
  test.each([
    [0x3c00, 1],
    [0xc000, -2],
    [0x3555, 0.333251953125], // 2^-2 * (1 + 0x155/1024)
    [0x7bff, 65504], // largest finite
    [0x0400, 2 ** -14], // smallest normal
    [0x0001, 2 ** -24], // smallest subnormal
    [0x03ff, 1023 * 2 ** -24], // largest subnormal
    [0x0000, 0],
    [0x7c00, Infinity],
    [0xfc00, -Infinity],
  ])('f16 bits %d -> %s', (bits, value) => {
    expect(f16BitsToFloat(bits)).toBe(value);
    expect(decodeF16(Uint16Array.of(bits))[0]).toBe(value);
  });

  test('f16 negative zero and NaN', () => {
    expect(Object.is(f16BitsToFloat(0x8000), -0)).toBe(true);
    expect(f16BitsToFloat(0x7e00)).toBeNaN();
    expect(f16BitsToFloat(0x7c01)).toBeNaN();
  });

  test.each([
    [0x3f80, 1],
    [0xc000, -2],
    [0x4049, 3.140625],
    [0x7f80, Infinity],
    [0xff80, -Infinity],
    [0x0001, 2 ** -133], // smallest bf16 subnormal = smallest float32 subnormal * 2^16
  ])('bf16 bits %d -> %s', (bits, value) => {
    expect(bf16BitsToFloat(bits)).toBe(value);
    expect(decodeBf16(Uint16Array.of(bits))[0]).toBe(value);
  });

  test('bf16 NaN', () => {
    expect(bf16BitsToFloat(0x7fc0)).toBeNaN();
  });
});

describe('half-float encoding rounds to nearest, ties to even', () => {
  test.each([
    [1, 0x3c00],
    [-2, 0xc000],
    [65504, 0x7bff],
    [65519, 0x7bff], // below the midpoint 65520 between 65504 and 65536 (= inf)
    [65520, 0x7c00], // the midpoint ties to even: 0x7c00, which is infinity
    [1e6, 0x7c00],
    [2 ** -24, 0x0001],
    [2 ** -25, 0x0000], // half of the smallest subnormal ties to even: 0
    [3 * 2 ** -26, 0x0001], // 0.75 units rounds up
    [3 * 2 ** -25, 0x0002], // 1.5 units ties to even: 2
    [1 + 2 ** -11, 0x3c00], // exactly half an ulp above 1: ties to even (mantissa 0)
    [1 + 3 * 2 ** -11, 0x3c02], // 1.5 ulps: ties to even (mantissa 2)
    [1 + 2 ** -11 + 2 ** -20, 0x3c01], // just above the tie
    [2047 * 2 ** -25, 0x0400], // rounds up from the largest subnormal into the smallest normal
    [Infinity, 0x7c00],
    [-Infinity, 0xfc00],
  ])('f16(%s) has bits %d', (value, bits) => {
    expect(floatToF16Bits(value)).toBe(bits);
    expect(encodeF16(Float32Array.of(value))[0]).toBe(bits);
  });

  test('f16 keeps NaN a NaN and the sign of zero', () => {
    expect(f16BitsToFloat(floatToF16Bits(NaN))).toBeNaN();
    expect(floatToF16Bits(-0)).toBe(0x8000);
  });

  test.each([
    [1, 0x3f80],
    [-2, 0xc000],
    [3.14159, 0x4049], // 0x40490FD0: the dropped half 0x0FD0 is below 0x8000
    [1 + 2 ** -8, 0x3f80], // float32 0x3F808000: a tie, even mantissa 0x80 stays
    [1 + 3 * 2 ** -8, 0x3f82], // 0x3F818000: a tie, odd 0x81 rounds up to 0x82
    [1 + 2 ** -8 + 2 ** -20, 0x3f81], // just above the tie
    [3.4e38, 0x7f80], // rounds past the largest bf16 to infinity
    [Infinity, 0x7f80],
    [-Infinity, 0xff80],
  ])('bf16(%s) has bits %d', (value, bits) => {
    expect(floatToBf16Bits(value)).toBe(bits);
    expect(encodeBf16(Float32Array.of(value))[0]).toBe(bits);
  });

  test('bf16 keeps NaN a NaN', () => {
    expect(bf16BitsToFloat(floatToBf16Bits(NaN))).toBeNaN();
  });

  test('every f16 pattern survives decode then encode', () => {
    const all = new Uint16Array(65536).map((_, i) => i);
    const back = encodeF16(decodeF16(all));
    for (const [i, b] of back.entries()) {
      const isNaN = (i & 0x7c00) === 0x7c00 && (i & 0x3ff) !== 0;
      if (!isNaN && b !== i) throw new Error(`0x${i.toString(16)} came back as 0x${b.toString(16)}`);
    }
  });
});
