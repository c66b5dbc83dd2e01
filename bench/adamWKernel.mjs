// AdamW's element-wise step: the WebAssembly SIMD kernel HostAdamW runs (`AdamWKernel`) against the scalar float32 loop
// it replaced (the same operations, each rounded with Math.fround), alternating on the same buffers, 6 timed after a
// warm-up, medians. Prints one line per size and checks that both give the same bits.
// usage: node bench/adamWKernel.mjs   (after npm run build)
import { loadavg } from 'node:os';
import { AdamWKernel } from '@drmas/plugin-backend-onnx';

const f32 = Math.fround;

function scalarStep(p, g, m, v, s) {
  for (let i = 0; i < p.length; i++) {
    const expAvg = f32(f32(m[i] * s.keep1) + f32(g[i] * s.take1));
    const expAvgSq = f32(f32(v[i] * s.keep2) + f32(f32(g[i] * g[i]) * s.take2));
    m[i] = expAvg;
    v[i] = expAvgSq;
    const denom = f32(f32(f32(Math.sqrt(expAvgSq)) / s.bias2Sqrt) + s.eps);
    p[i] = f32(p[i] * s.shrink) - f32(f32(expAvg / denom) * s.stepSize);
  }
}

const scalars = {
  keep1: f32(0.9),
  take1: f32(0.1),
  keep2: f32(0.999),
  take2: f32(0.001),
  bias2Sqrt: f32(0.0447),
  eps: f32(1e-8),
  shrink: f32(1 - 3e-7),
  stepSize: f32(3e-4),
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

for (const [label, n] of [
  ['tiny (3.08 M values)', 3_083_264],
  ['about small (28 M values)', 28_000_000],
]) {
  const g = Float32Array.from({ length: n }, (_, i) => Math.sin(i) * 1e-3);
  const scalar = { p: new Float32Array(n).fill(0.01), m: new Float32Array(n), v: new Float32Array(n) };
  const simd = { p: new Float32Array(n).fill(0.01), m: new Float32Array(n), v: new Float32Array(n) };
  const kernel = new AdamWKernel();
  const times = { scalar: [], kernel: [] };
  for (let round = 0; round < 7; round++) {
    let t = performance.now();
    scalarStep(scalar.p, g, scalar.m, scalar.v, scalars);
    if (round > 0) times.scalar.push(performance.now() - t);
    t = performance.now();
    kernel.step(simd.p, g, simd.m, simd.v, scalars);
    if (round > 0) times.kernel.push(performance.now() - t);
  }
  const same = simd.p.every((x, i) => Object.is(x, scalar.p[i])) && simd.v.every((x, i) => Object.is(x, scalar.v[i]));
  const [a, b] = [median(times.scalar), median(times.kernel)];
  console.log(
    `${label}: scalar loop ${a.toFixed(1)} ms, kernel ${b.toFixed(1)} ms, ${(a / b).toFixed(2)}x; same bits: ${same}; load ${loadavg()[0].toFixed(2)}`,
  );
}
