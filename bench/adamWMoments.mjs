// HostAdamW's optimizer step with float32 moments and with 8-bit ones (`optimizer.moments: 8bit`), alternating on
// buffers of the same values, 6 timed after a warm-up each, medians in ns a value (one thread: the step runs on the
// main thread). Prints one line per size.
// usage: node bench/adamWMoments.mjs   (after npm run build)
import { loadavg } from 'node:os';
import { HostAdamW } from '@drmas/plugin-backend-onnx';

const settings = { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0.01, maxGradNorm: 0, paramGroups: [] };
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

for (const size of [3_083_264, 8_000_000]) {
  const grads = new Map([['w', new Float32Array(size).map((_, i) => Math.cos(i) * 1e-3 * (1 + (i % 7)))]]);
  const runs = ['float32', '8bit'].map((moments) => ({
    moments,
    optimizer: new HostAdamW(),
    weights: new Map([['w', { shape: [size], data: new Float32Array(size).map((_, i) => Math.sin(i) * 0.1) }]]),
    times: [],
  }));
  for (const run of runs) run.optimizer.apply(run.weights, grads, { ...settings, moments: run.moments }, 1);
  for (let round = 0; round < 6; round++) {
    for (const run of runs) {
      const start = performance.now();
      run.optimizer.apply(run.weights, grads, { ...settings, moments: run.moments }, 1);
      run.times.push(((performance.now() - start) * 1e6) / size);
    }
  }
  const [full, eight] = runs.map((run) => median(run.times));
  console.log(
    `${size.toLocaleString('en')} values: float32 ${full.toFixed(2)} ns a value, 8-bit ${eight.toFixed(2)} (${(eight / full).toFixed(1)}x); load ${loadavg()[0].toFixed(2)}`,
  );
}
