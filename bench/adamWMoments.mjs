// HostAdamW's optimizer step with float32 moments and with 8-bit ones (`optimizer.moments: 8bit`, the WebAssembly
// kernel), and the 8-bit step as JavaScript quantizes (dequantizeBlockwise, the float32 kernel, quantizeBlockwise: the
// path before the kernel, and the kernel's test reference), alternating on buffers of the same values, 6 timed after a
// warm-up each, medians in ns a value (one thread: the step runs on the main thread). Prints one line per size.
// usage: node bench/adamWMoments.mjs   (after npm run build)
import { loadavg } from 'node:os';
import { AdamWKernel, HostAdamW } from '@drmas/plugin-backend-onnx';
import { dequantizeBlockwise, dynamicMap, emptyBlockwiseCodes, quantizeBlockwise } from '@drmas/models';

const settings = { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0.01, maxGradNorm: 0, paramGroups: [] };
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const f32 = Math.fround;

/** The 8-bit step through the JavaScript quantizer, a chunk of 16,384 values at a time, with HostAdamW's scalars. */
function javascriptQuantizer(size) {
  const kernel = new AdamWKernel();
  const codes = [emptyBlockwiseCodes(size), emptyBlockwiseCodes(size)];
  const maps = [dynamicMap(true), dynamicMap(false)];
  const chunk = [new Float32Array(16384), new Float32Array(16384)];
  let step = 0;
  return (weights, grads) => {
    step += 1;
    const {
      lr,
      betas: [b1, b2],
      eps,
      weightDecay,
    } = settings;
    const s = {
      keep1: f32(b1),
      take1: f32(1 - b1),
      keep2: f32(b2),
      take2: f32(1 - b2),
      bias2Sqrt: f32(Math.sqrt(1 - b2 ** step)),
      eps: f32(eps),
      shrink: f32(1 - lr * weightDecay),
      stepSize: f32(lr / (1 - b1 ** step)),
    };
    for (let start = 0; start < size; start += 16384) {
      const end = Math.min(start + 16384, size);
      const moments = chunk.map((c) => c.subarray(0, end - start));
      for (const k of [0, 1]) dequantizeBlockwise(codes[k], maps[k], moments[k], start);
      kernel.step(weights.subarray(start, end), grads.subarray(start, end), moments[0], moments[1], s);
      for (const k of [0, 1]) quantizeBlockwise(moments[k], maps[k], codes[k], start);
    }
  };
}

for (const size of [3_083_264, 8_000_000]) {
  const grad = new Float32Array(size).map((_, i) => Math.cos(i) * 1e-3 * (1 + (i % 7)));
  const grads = new Map([['w', grad]]);
  const initial = () => new Map([['w', { shape: [size], data: new Float32Array(size).map((_, i) => Math.sin(i) * 0.1) }]]);
  const engine = (label, moments) => {
    const optimizer = new HostAdamW();
    return { label, weights: initial(), times: [], step: (w) => optimizer.apply(w, grads, { ...settings, moments }, 1) };
  };
  const reference = javascriptQuantizer(size);
  const runs = [
    engine('float32', 'float32'),
    engine('8-bit', '8bit'),
    { label: '8-bit, JavaScript quantizer', weights: initial(), times: [], step: (w) => reference(w.get('w').data, grad) },
  ];
  for (const run of runs) run.step(run.weights);
  for (let round = 0; round < 6; round++) {
    for (const run of runs) {
      const start = performance.now();
      run.step(run.weights);
      run.times.push(((performance.now() - start) * 1e6) / size);
    }
  }
  const [full, ...eight] = runs.map((run) => median(run.times));
  const rows = eight.map((ns, k) => `${runs[k + 1].label} ${ns.toFixed(2)} (${(ns / full).toFixed(1)}x)`);
  const same = runs[1].weights.get('w').data.every((x, i) => Object.is(x, runs[2].weights.get('w').data[i]));
  console.log(
    `${size.toLocaleString('en')} values: float32 ${full.toFixed(2)} ns a value, ${rows.join(', ')}; 8-bit weights equal: ${same}; load ${loadavg()[0].toFixed(2)}`,
  );
}
