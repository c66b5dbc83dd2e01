// Throughput of the tfjs backend on the selected runtime; prints one JSON line per measurement.
// usage: npx tsc -p plugins/backend-tfjs/tsconfig.json && node plugins/backend-tfjs/bench/model.bench.mjs [tiny|small ...]
//   env DRMAS_RUNTIME=auto|wasm|cpu|tfjs-node|tfjs-node-gpu
import * as tf from '@tensorflow/tfjs-core';
import { createTfjsPolicyBackend } from '../dist/TfjsPolicyBackend.js';
import { policyGradientLoss as loss, trainingBatch, updateRequest } from '../../../bench/lib/workloads.mjs';

const models = process.argv.slice(2).length ? process.argv.slice(2) : ['tiny', 'small'];
const runtime = process.env.DRMAS_RUNTIME ?? 'auto';

for (const name of models) {
  const backend = await createTfjsPolicyBackend({ model: name, seed: 0, runtime });
  const vocab = backend.model.config.vocabSize;
  const params = backend.model.parameterCount;

  // Generation: batch 32, 32-token prompts, 96 new tokens (no stop ids, so every row runs to the end).
  const prompts = Array.from({ length: 32 }, (_, r) => Array.from({ length: 32 }, (_, j) => (r * 31 + j * 17) % vocab));
  await backend.generate({ prompts: prompts.slice(0, 2), maxNewTokens: 4, seed: 1, stopTokenIds: [] });
  let t = performance.now();
  const out = await backend.generate({ prompts, maxNewTokens: 96, seed: 1, temperature: 1, stopTokenIds: [] });
  let seconds = (performance.now() - t) / 1000;
  const generated = out.tokenIds.reduce((s, r) => s + r.length, 0);
  console.log(
    JSON.stringify({
      bench: 'generate',
      model: name,
      params,
      runtime: backend.runtime,
      batch: 32,
      promptTokens: 32,
      newTokens: 96,
      seconds: +seconds.toFixed(2),
      tokensPerSecond: +(generated / seconds).toFixed(1),
    }),
  );

  // Training: 32 rows x 256 tokens (32 prompt + 224 response), forward + backward + AdamW. Micro-batches of 8
  // rows for tiny, 2 for small (wasm's 32-bit heap cannot hold the activations of 8 x 256 tokens of small).
  const microBatchSize = Number(process.env.DRMAS_MICRO_BATCH ?? (name === 'small' ? 2 : 8));
  await backend.update(updateRequest(trainingBatch(2, 8, 8, vocab), loss, 2));
  const batch = trainingBatch(32, 32, 224, vocab);
  const steps = Number(process.env.DRMAS_TRAIN_STEPS ?? 1);
  const tensorsBefore = tf.memory().numTensors;
  t = performance.now();
  let result;
  for (let i = 0; i < steps; i++) result = await backend.update(updateRequest(batch, loss, microBatchSize));
  seconds = (performance.now() - t) / 1000 / steps;
  console.log(
    JSON.stringify({
      bench: 'train',
      model: name,
      params,
      runtime: backend.runtime,
      rows: 32,
      tokensPerRow: 256,
      microBatchSize,
      secondsPerStep: +seconds.toFixed(2),
      tokensPerSecond: +((32 * 256) / seconds).toFixed(1),
      loss: +result.loss.toFixed(4),
      tensorLeak: tf.memory().numTensors - tensorsBefore,
    }),
  );
  backend.dispose();
}
