// One training step of the onnx trainer on a model folder, on fixed pseudo-random tokens: the resident set's
// high-water mark and the time of each phase (load, first forward/backward with the session build, a full update
// with AdamW, a second update). Prints one JSON line per phase.
//
//   node bench/sizes/trainStep.mjs MODEL_DIR ROWS PROMPT_TOKENS RESPONSE_TOKENS MICRO_BATCH [VOCAB_CHUNK]
//
// VOCAB_CHUNK sets the output head's chunk width (default HEAD_VOCAB_CHUNK; 1e9 gives the one-LogSoftmax head).
// UPDATES=0 stops after the first forward/backward, UPDATES=1 after one update. SEGMENTS sets the backward's
// segments (`models.<id>.backwardSegments`: auto, the default, or a number; 1 is one graph); MOMENTS=8bit holds
// AdamW's moments in 8 bits; MICRO_TOKENS bounds a micro-batch's padded tokens (a large model's default: the
// engine's bound, `defaultMicroBatchTokens`, which MEMORY_BUDGET, a run's `trainer.memoryBudget` such as 17.6GiB,
// raises from its least). Run it under
// `/usr/bin/time -f %M` for the peak including what follows the last line. After the second update a last line gives
// its GFLOP/s (the model's nominal matmul FLOPs, 3x the forward, over its wall time) and the share of the engine's own
// matmul ceiling (a 2048 x 2048 x 2048 MatMul on onnxruntime with the same threads, median of 5, measured right after).
import { mark, segmentsFromEnv, sizeTokens } from './phases.mjs';
import { decoderTrainingFlops, shapeOf } from '../lib/workloads.mjs';
import { matmulCeiling } from '../lib/matmulCeiling.mjs';
import { loadModelWeights } from '@drmas/models';
import { OnnxTrainer } from '@drmas/plugin-backend-onnx';
import { TrainingBatch, lossTotals, parseByteSize } from '@drmas/core';

const [model, rowsArg, promptArg, responseArg, microArg, chunkArg] = process.argv.slice(2);
if (!model || !microArg) {
  console.error('usage: node bench/sizes/trainStep.mjs MODEL_DIR ROWS PROMPT_TOKENS RESPONSE_TOKENS MICRO_BATCH [VOCAB_CHUNK]');
  process.exit(2);
}
const [rows, promptTokens, responseTokens, microBatch] = [rowsArg, promptArg, responseArg, microArg].map(Number);
const vocabChunk = chunkArg ? Number(chunkArg) : undefined;

mark('start');
const { config, weights } = await loadModelWeights({ model });
mark('loaded');
const backwardSegments = segmentsFromEnv();
const memoryBudget = process.env.MEMORY_BUDGET ? parseByteSize(process.env.MEMORY_BUDGET) : undefined;
const trainer = await OnnxTrainer.create(config, weights, {}, { adopt: true, vocabChunk, backwardSegments, memoryBudget });
mark('trainer', { segments: trainer.segments });
const V = config.vocabSize;
const { prompts, responses } = sizeTokens(rows, promptTokens, responseTokens, V);
const batch = TrainingBatch.fromSequences(prompts, responses);
batch.advantages.forEach((_, i) => (batch.advantages[i] = ((i % 7) - 3) / 3));
batch.oldLogProbs = new Float32Array(batch.rows * batch.responseLength).fill(-12);
const view = batch.all();
const loss = {
  compute(ops, input) {
    const weighted = ops.mul(ops.mul(input.logProbs, input.advantages), input.responseMask);
    return { loss: ops.div(ops.neg(ops.sum(weighted)), input.totals.tokens), metrics: {} };
  },
};
const request = {
  batch: view,
  totals: lossTotals(view, { responseLength: responseTokens, microBatchSize: microBatch }),
  loss,
  microBatchSize: microBatch,
  ...(process.env.MICRO_TOKENS && { microBatchTokens: Number(process.env.MICRO_TOKENS) }),
  lrScale: 1,
  optimizer: {
    lr: 1e-5,
    betas: [0.9, 0.999],
    eps: 1e-8,
    weightDecay: 0.01,
    maxGradNorm: 1,
    paramGroups: [],
    ...(process.env.MOMENTS && { moments: process.env.MOMENTS }),
  },
};
const first = await trainer.gradients(request);
mark('forward/backward (with the session build)', { loss: first.loss });
if (process.env.UPDATES !== '0') {
  const one = await trainer.update(request);
  mark('update 1 (forward/backward, AdamW)', { loss: one.loss, gradNorm: one.gradNorm });
  if (process.env.UPDATES !== '1') {
    const started = performance.now();
    const two = await trainer.update(request);
    const seconds = (performance.now() - started) / 1000;
    mark('update 2', { loss: two.loss });
    const gflops = decoderTrainingFlops(shapeOf(config), rows, promptTokens + responseTokens) / seconds / 1e9;
    const ceiling = await matmulCeiling();
    mark('throughput of update 2', {
      gflops: +gflops.toFixed(1),
      ceilingGflops: +ceiling.toFixed(1),
      shareOfCeiling: +(gflops / ceiling).toFixed(3),
      trainedTokensPerSecond: +((rows * responseTokens) / seconds).toFixed(1),
    });
  }
}
await trainer.release();
