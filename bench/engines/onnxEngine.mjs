// onnx engine measurements: node ... onnxEngine.mjs generate <model> [inputs|initializers] | sync <model> <mode> | matmul
//   | train <model> <repeats> <microBatchSize> [intraOpThreads]
import { createOnnxPolicyBackend, loadOnnxRuntime } from '../../plugins/backend-onnx/src/index.ts';
import { matmulCeiling } from '../lib/matmulCeiling.mjs';
import { emit, generationPrompts, GENERATION, measureUpdates, median } from '../lib/workloads.mjs';
import { availableParallelism } from 'node:os';

const [bench, model = 'tiny', weightMode = 'inputs', repeatsArg = '1'] = process.argv.slice(2);
const repeats = Number(repeatsArg);
// The execution provider of the onnx engine's measurements (cpu by default; webgpu or cuda where a GPU is lent).
const provider = process.env.DRMAS_BENCH_ONNX_PROVIDER ?? 'cpu';

if (bench === 'matmul') {
  const ort = await loadOnnxRuntime();
  const n = 2048;
  emit({
    engine: 'onnx',
    bench: 'matmul',
    runtime: `onnxruntime-node ${ort.env.versions.node} (CPU, ${availableParallelism()} threads)`,
    size: n,
    repeats: 5,
    gflops: await matmulCeiling(5, { intraOpNumThreads: availableParallelism() }),
  });
} else if (bench === 'train') {
  // The backend's own update (OnnxTrainer.update: forward, loss, backward per micro-batch, gradient accumulation,
  // clipping, AdamW).
  const [, , repeatsText = '1', microText = '8', threadsText] = process.argv.slice(2);
  const sessionOptions = threadsText ? { intraOpNumThreads: Number(threadsText) } : undefined;
  const backend = await createOnnxPolicyBackend({ model, seed: 0, provider, sessionOptions });
  emit({ engine: 'onnx', model, ...(await measureUpdates(backend, backend.config.vocabSize, Number(microText), Number(repeatsText))) });
  backend.dispose();
} else {
  const backend = await createOnnxPolicyBackend({ model, seed: 0, provider, weightMode });
  const vocab = backend.config.vocabSize;
  const prompts = generationPrompts(vocab);
  await backend.generate({ prompts: prompts.slice(0, 2), maxNewTokens: 4, seed: 1, stopTokenIds: [] });
  const times = [];
  for (let i = 0; i < repeats; i++) {
    const t = performance.now();
    await backend.generate({ prompts, maxNewTokens: GENERATION.newTokens, seed: 1 + i, temperature: 1, stopTokenIds: [] });
    times.push((performance.now() - t) / 1000);
  }
  const seconds = median(times);
  const record = {
    engine: 'onnx',
    bench: 'generate',
    model,
    runtime: backend.runtime,
    weightMode,
    ...GENERATION,
    repeats,
    seconds,
    tokensPerSecond: (GENERATION.batch * GENERATION.newTokens) / seconds,
  };
  if (bench === 'sync') {
    // The cost of taking new weights: syncWeights plus the first run after it (session rebuild in initializer mode).
    const source = { exportWeights: () => backend.exportWeights() };
    const syncTimes = [];
    for (let i = 0; i < 3; i++) {
      const fresh = await source.exportWeights();
      const t = performance.now();
      await backend.syncWeights({ exportWeights: async () => fresh });
      await backend.generate({ prompts: prompts.slice(0, 1), maxNewTokens: 1, seed: 1, stopTokenIds: [] });
      syncTimes.push((performance.now() - t) / 1000);
    }
    emit({ ...record, bench: 'sync', syncSeconds: median(syncTimes), syncRepeats: 3 });
  } else {
    emit(record);
  }
  backend.dispose();
}
