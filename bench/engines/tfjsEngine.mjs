// tfjs engine measurements: node ... tfjsEngine.mjs generate|train <model> [repeats] [microBatchSize] | matmul
import * as tf from '@tensorflow/tfjs-core';
import { createTfjsPolicyBackend } from '../../plugins/backend-tfjs/src/TfjsPolicyBackend.ts';
import { selectRuntime } from '../../plugins/backend-tfjs/src/runtime/RuntimeSelector.ts';
import { emit, generationPrompts, GENERATION, measureUpdates, median } from '../lib/workloads.mjs';

const [bench, model = 'tiny', repeatsArg = '1'] = process.argv.slice(2);
const repeats = Number(repeatsArg);

if (bench === 'matmul') {
  const runtime = await selectRuntime('auto');
  const n = 2048;
  const a = tf.fill([n, n], 0.5);
  const b = tf.fill([n, n], 0.25);
  const run = async () => {
    const c = tf.matMul(a, b);
    await c.data();
    c.dispose();
  };
  await run();
  const times = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    await run();
    times.push((performance.now() - t) / 1000);
  }
  const seconds = median(times);
  emit({
    engine: 'tfjs',
    bench: 'matmul',
    runtime: runtime.description,
    size: n,
    repeats: 5,
    seconds,
    gflops: (2 * n ** 3) / seconds / 1e9,
  });
} else {
  const backend = await createTfjsPolicyBackend({ model, seed: 0 });
  const vocab = backend.model.config.vocabSize;
  if (bench === 'generate') {
    const prompts = generationPrompts(vocab);
    await backend.generate({ prompts: prompts.slice(0, 2), maxNewTokens: 4, seed: 1, stopTokenIds: [] });
    const times = [];
    for (let i = 0; i < repeats; i++) {
      const t = performance.now();
      await backend.generate({ prompts, maxNewTokens: GENERATION.newTokens, seed: 1 + i, temperature: 1, stopTokenIds: [] });
      times.push((performance.now() - t) / 1000);
    }
    const seconds = median(times);
    emit({
      engine: 'tfjs',
      bench: 'generate',
      model,
      runtime: backend.runtime,
      ...GENERATION,
      repeats,
      seconds,
      tokensPerSecond: (GENERATION.batch * GENERATION.newTokens) / seconds,
    });
  } else {
    // Micro-batches of 8 rows for tiny, 2 for small (wasm's 32-bit heap cannot hold 8 x 256 tokens of small).
    const microBatchSize = Number(process.argv[5] ?? (model === 'small' ? 2 : 8));
    emit({ engine: 'tfjs', model, ...(await measureUpdates(backend, vocab, microBatchSize, repeats)) });
  }
  backend.dispose();
}
