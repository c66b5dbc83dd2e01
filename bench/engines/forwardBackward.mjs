// Forward + backward (no optimizer step) of one engine on the training workload:
// node ... forwardBackward.mjs onnx|tfjs <model> <repeats> [microBatchSize] [profileDir]
// Prints one JSON line (median seconds of `repeats` runs after one warm-up run on the same batch).
import * as tf from '@tensorflow/tfjs-core';
import { loadModelWeights } from '@drmas/models';
import { longestResponse, lossTotals } from '@drmas/core';
import { OnnxTrainer } from '../../plugins/backend-onnx/src/index.ts';
import { createTfjsPolicyBackend } from '../../plugins/backend-tfjs/src/TfjsPolicyBackend.ts';
import { tfjsTensorOps } from '../../plugins/backend-tfjs/src/training/TfjsTensorOps.ts';
import { emit, median, policyGradientLoss, TRAINING, trainingBatch } from '../lib/workloads.mjs';

const [engine, model = 'tiny', repeatsArg = '3', microArg, profileDir] = process.argv.slice(2);
const repeats = Number(repeatsArg);
// tfjs: the micro-batches of `npm run bench` (wasm's 32-bit heap cannot hold 8 x 256 tokens of small); onnx: all rows.
const microBatchSize = Number(microArg ?? (engine === 'onnx' ? TRAINING.rows : model === 'small' ? 2 : 8));
const tokens = TRAINING.rows * (TRAINING.promptTokens + TRAINING.responseTokens);

let run;
// Releasing the onnx sessions writes onnxruntime's profile (with a profile folder).
let release = async () => {};
let runtime;
let vocab;
if (engine === 'onnx') {
  const { config, weights } = await loadModelWeights({ model, seed: 0 });
  vocab = config.vocabSize;
  const options = profileDir ? { enableProfiling: true, profileFilePrefix: `${profileDir}/onnx-training-${model}` } : {};
  const trainer = await OnnxTrainer.create(config, weights, options);
  release = () => trainer.release();
  runtime = `onnxruntime-node (CPU, ${(await import('node:os')).availableParallelism()} threads)`;
  run = (view) =>
    trainer.gradients({
      batch: view,
      totals: lossTotals(view, { responseLength: longestResponse(view), microBatchSize }),
      loss: policyGradientLoss,
      microBatchSize,
    });
} else {
  const backend = await createTfjsPolicyBackend({ model, seed: 0 });
  vocab = backend.model.config.vocabSize;
  runtime = backend.runtime;
  const variables = [...backend.model.weights.values()];
  // The tfjs trainer's own loss inputs (PolicyTrainer.lossInput, private in TypeScript): the same forward as
  // `update`, with its gradient accumulation, without the clipping and AdamW that follow.
  const trainer = backend.trainer;
  run = async (view) => {
    const totals = lossTotals(view, { responseLength: longestResponse(view), microBatchSize });
    let accumulated;
    for (let start = 0; start < view.rows.length; start += microBatchSize) {
      const micro = view.rows.subarray(start, start + microBatchSize);
      const { value, grads } = tf.variableGrads(
        () => policyGradientLoss.compute(tfjsTensorOps, trainer.lossInput(view.batch, micro, totals, false, false)).loss,
        variables,
      );
      value.dispose();
      const list = variables.map((v) => grads[v.name]);
      if (accumulated) {
        const next = accumulated.map((a, i) => tf.add(a, list[i]));
        tf.dispose([...accumulated, ...list]);
        accumulated = next;
      } else accumulated = list;
    }
    await Promise.all(accumulated.map((g) => g.data()));
    tf.dispose(accumulated);
  };
}

const batch = trainingBatch(TRAINING.rows, TRAINING.promptTokens, TRAINING.responseTokens, vocab);
await run(batch);
const times = [];
for (let i = 0; i < repeats; i++) {
  const t = performance.now();
  await run(batch);
  times.push((performance.now() - t) / 1000);
}
await release();
const seconds = median(times);
emit({
  engine,
  bench: 'forward-backward',
  model,
  runtime,
  rows: TRAINING.rows,
  tokensPerRow: TRAINING.promptTokens + TRAINING.responseTokens,
  microBatchSize,
  repeats,
  seconds,
  tokensPerSecond: tokens / seconds,
});
