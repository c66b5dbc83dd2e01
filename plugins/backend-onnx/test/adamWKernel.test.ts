import { describe, expect, it } from '@jest/globals';
import { dequantizeBlockwise, dynamicMap, emptyBlockwiseCodes, quantizeBlockwise, type BlockwiseCodes } from '@drmas/models';
import { AdamWKernel, type AdamWScalars } from '../src/training/AdamWKernel.js';

/**
 * The WebAssembly SIMD AdamW step against the scalar float32 formula in the order HostAdamW documents (each operation
 * rounded to float32, as tfjs's element-wise kernels apply them), bit for bit, and against AdamW in float64; its
 * 8-bit step against the JavaScript quantizer around that formula (itself checked against bitsandbytes).
 */
const f32 = Math.fround;

function scalars(step: number, lr: number, decay: number): AdamWScalars {
  const [b1, b2] = [0.9, 0.999];
  return {
    keep1: f32(b1),
    take1: f32(1 - b1),
    keep2: f32(b2),
    take2: f32(1 - b2),
    bias2Sqrt: f32(Math.sqrt(1 - b2 ** step)),
    eps: f32(1e-8),
    shrink: f32(1 - lr * decay),
    stepSize: f32(lr / (1 - b1 ** step)),
  };
}

function scalarStep(p: Float32Array, g: Float32Array, m: Float32Array, v: Float32Array, s: AdamWScalars): void {
  for (let i = 0; i < p.length; i++) {
    const expAvg = f32(f32(m[i]! * s.keep1) + f32(g[i]! * s.take1));
    const expAvgSq = f32(f32(v[i]! * s.keep2) + f32(f32(g[i]! * g[i]!) * s.take2));
    m[i] = expAvg;
    v[i] = expAvgSq;
    const denom = f32(f32(f32(Math.sqrt(expAvgSq)) / s.bias2Sqrt) + s.eps);
    p[i] = f32(p[i]! * s.shrink) - f32(f32(expAvg / denom) * s.stepSize);
  }
}

/** A linear congruential stream in [-0.5, 0.5). */
function stream(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32 - 0.5;
}

function bitsEqual(a: Float32Array, b: Float32Array): boolean {
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  return x.length === y.length && x.every((bits, i) => bits === y[i]);
}

/** Equal as float32 values (Object.is: -0 is not 0, NaN is NaN whatever its payload). */
function sameValues(a: Float32Array, b: Float32Array): boolean {
  return a.length === b.length && a.every((x, i) => Object.is(x, b[i]));
}

describe('AdamWKernel', () => {
  // Two chunks and a tail that is not a multiple of four lanes.
  const n = 2 * 16384 + 7;

  it('gives the scalar float32 formula bit for bit over steps, chunks, tails and edge values', () => {
    const next = stream(7);
    const p0 = Float32Array.from({ length: n }, () => next() * 0.04);
    const grads = Array.from({ length: 4 }, (_, k) => Float32Array.from({ length: n }, () => next() * 10 ** -(k + 2)));
    // Denormal, zero, signed zero and huge gradients; a denormal and a negative zero weight.
    grads[0]!.set([1e-40, 0, -0, 3e38, -3e38, 1e-45], 5);
    grads[1]!.set([1e-40, 0, -0], n - 3);
    p0.set([-0, 1e-42, -1e-42], 40);
    const kernel = new AdamWKernel();
    const expected = { p: p0.slice(), m: new Float32Array(n), v: new Float32Array(n) };
    const got = { p: p0.slice(), m: new Float32Array(n), v: new Float32Array(n) };
    for (let step = 1; step <= 4; step++) {
      const s = scalars(step, 3e-4, step % 2 === 0 ? 0 : 0.1);
      const g = grads[step - 1]!;
      scalarStep(expected.p, g, expected.m, expected.v, s);
      kernel.step(got.p, g, got.m, got.v, s);
      expect(bitsEqual(got.p, expected.p)).toBe(true);
      expect(bitsEqual(got.m, expected.m)).toBe(true);
      expect(bitsEqual(got.v, expected.v)).toBe(true);
    }
    // The gradients are read, never written.
    expect(grads[0]![8]).toBe(f32(3e38));
  });

  it('agrees with AdamW in float64 to float32 precision', () => {
    const next = stream(11);
    const p = Float32Array.from({ length: 1001 }, () => next());
    const g = Float32Array.from({ length: 1001 }, () => next() * 1e-2);
    const [lr, decay, b1, b2, eps] = [1e-3, 0.01, 0.9, 0.999, 1e-8];
    const want = Array.from(p, (w, i) => {
      const m = (1 - b1) * g[i]!;
      const v = (1 - b2) * g[i]! * g[i]!;
      return w * (1 - lr * decay) - (lr * (m / (1 - b1))) / (Math.sqrt(v / (1 - b2)) + eps);
    });
    new AdamWKernel().step(p, g, new Float32Array(1001), new Float32Array(1001), scalars(1, lr, decay));
    for (let i = 0; i < p.length; i++) expect(Math.abs(p[i]! - want[i]!)).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(want[i]!)));
  });

  it('steps 8-bit moments as dequantize, the scalar formula and quantizeBlockwise do, bit for bit', () => {
    // Two chunks and a short last block whose length is not a multiple of four lanes.
    const size = 2 * 16384 + 3 * 256 + 37;
    const next = stream(5);
    const p0 = Float32Array.from({ length: size }, () => next() * 0.04);
    const grads = Array.from({ length: 5 }, (_, k) =>
      Float32Array.from({ length: size }, (_, i) => next() * 10 ** -(k + 2) * (i % 997 === 0 ? 1e4 : 1)),
    );
    // Block 3 never moves (zero gradients: absmax 0); block 5 turns NaN at step 3 (its codes 0, as bitsandbytes).
    for (const g of grads) g.fill(0, 3 * 256, 4 * 256);
    grads[2]![5 * 256 + 9] = NaN;
    const codes = (): [BlockwiseCodes, BlockwiseCodes] => [emptyBlockwiseCodes(size), emptyBlockwiseCodes(size)];
    const expected = { p: p0.slice(), moments: codes() };
    const got = { p: p0.slice(), moments: codes() };
    const [signed, unsigned] = [dynamicMap(true), dynamicMap(false)];
    const kernel = new AdamWKernel();
    for (let step = 1; step <= 5; step++) {
      const s = scalars(step, 1e-2, 0.01);
      const [m, v] = [new Float32Array(size), new Float32Array(size)];
      dequantizeBlockwise(expected.moments[0], signed, m, 0);
      dequantizeBlockwise(expected.moments[1], unsigned, v, 0);
      scalarStep(expected.p, grads[step - 1]!, m, v, s);
      quantizeBlockwise(m, signed, expected.moments[0], 0);
      quantizeBlockwise(v, unsigned, expected.moments[1], 0);
      kernel.stepBlockwise(got.p, grads[step - 1]!, ...got.moments, s);
      // Bit for bit but for NaN payloads, which WebAssembly leaves unspecified.
      expect(sameValues(got.p, expected.p)).toBe(true);
      for (const k of [0, 1]) {
        expect(got.moments[k]!.codes).toEqual(expected.moments[k]!.codes);
        expect(sameValues(got.moments[k]!.absmax, expected.moments[k]!.absmax)).toBe(true);
      }
    }
    // The cases the test means to reach: a zero block, a NaN block coded 0, codes on both ends of each map.
    const [first, second] = got.moments;
    expect(first.absmax[3]).toBe(0);
    expect(first.absmax[5]).toBeNaN();
    expect(Number.isNaN(got.p[5 * 256 + 9]!) && !Number.isNaN(got.p[4 * 256]!)).toBe(true);
    expect(first.codes.subarray(5 * 256, 6 * 256).every((c) => c === 0)).toBe(true);
    expect(first.codes.includes(0) && first.codes.includes(255)).toBe(true);
    expect(second.codes.includes(255)).toBe(true);
  });
});
