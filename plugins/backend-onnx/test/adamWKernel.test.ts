import { describe, expect, it } from '@jest/globals';
import { AdamWKernel, type AdamWScalars } from '../src/training/AdamWKernel.js';

/**
 * The WebAssembly SIMD AdamW step against the scalar float32 formula in the order HostAdamW documents (each operation
 * rounded to float32, as tfjs's element-wise kernels apply them), bit for bit, and against AdamW in float64.
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
});
