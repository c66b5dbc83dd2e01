// One RL step's engine work on a model folder, as `drmas train` does it with one onnx engine for sampling and
// training: load, sample ROWS responses of NEW_TOKENS from fixed prompts of PROMPT_TOKENS, score them (the old
// log-probs), one update (PPO's clipped loss on made-up advantages) in micro-batches of MICRO_BATCH rows. Prints one
// JSON line per phase: seconds, resident set and its high-water mark, JS ArrayBuffers (GiB).
//
//   node bench/sizes/engineStep.mjs MODEL_DIR ROWS PROMPT_TOKENS NEW_TOKENS MICRO_BATCH [MICRO_BATCH_TOKENS]
//
// WEIGHT_LAYOUT=fused|shared names the engine's weight layout, KV_CACHE=float32|float16 its sampler's key/value caches
// (`kvCachePrecision`); STOP_AFTER=generated (or scored) ends the run after that
// phase. Run it under `/usr/bin/time -v` for the peak including what follows the last line.
import { mark } from './phases.mjs';
import { createOnnxPolicyBackend } from '@drmas/plugin-backend-onnx';
import { TrainingBatch, lossTotals } from '@drmas/core';
import { PolicyLossFunction } from '@drmas/plugin-algorithms';

const [model, rowsArg, promptArg, newArg, microArg, tokensArg] = process.argv.slice(2);
if (!model || !microArg) {
  console.error('usage: node bench/sizes/engineStep.mjs MODEL_DIR ROWS PROMPT_TOKENS NEW_TOKENS MICRO_BATCH [MICRO_BATCH_TOKENS]');
  process.exit(2);
}
const [rows, promptTokens, newTokens, microBatch] = [rowsArg, promptArg, newArg, microArg].map(Number);
const microBatchTokens = tokensArg ? Number(tokensArg) : undefined;

mark('start');
const weightLayout = process.env.WEIGHT_LAYOUT; // fused | shared; default by size (defaultWeightLayout)
const kvCachePrecision = process.env.KV_CACHE; // float32 | float16; default float32
const engine = await createOnnxPolicyBackend({
  model,
  provider: 'cpu',
  ...(weightLayout && { weightLayout }),
  ...(kvCachePrecision && { kvCachePrecision }),
});
mark('engine loaded', { weightLayout: engine.weightLayout, kvCachePrecision: kvCachePrecision ?? 'float32' });
const V = engine.vocabSize;
const prompts = Array.from({ length: rows }, (_, r) => Array.from({ length: promptTokens }, (_, j) => (r * 31 + j * 17 + 1) % V));
const sampled = await engine.generate({ prompts, maxNewTokens: newTokens, temperature: 1, seed: 0, stopTokenIds: [] });
mark('generated', { tokens: sampled.tokenIds.reduce((s, t) => s + t.length, 0) });
const stopAfter = (phase) => {
  if (process.env.STOP_AFTER !== phase) return;
  engine.dispose();
  process.exit(0);
};
stopAfter('generated');
const batch = TrainingBatch.fromSequences(
  prompts.map((p) => Int32Array.from(p)),
  sampled.tokenIds.map((t) => Int32Array.from(t)),
);
const view = batch.all();
const scored = await engine.score({ batch: view });
batch.oldLogProbs = scored.logProbs;
batch.advantages.forEach((_, i) => (batch.advantages[i] = ((i % 7) - 3) / 3));
mark('scored');
stopAfter('scored');
const loss = new PolicyLossFunction({
  variant: 'vanilla',
  clipRatioLow: 0.2,
  clipRatioHigh: 0.28,
  clipRatioC: 3,
  aggregation: 'token-mean',
  klCoef: 0,
  klType: 'low_var_kl',
  entropyCoef: 0,
});
const result = await engine.update({
  batch: view,
  totals: lossTotals(view, { responseLength: newTokens, microBatchSize: microBatch }),
  loss,
  microBatchSize: microBatch,
  ...(microBatchTokens && { microBatchTokens }),
  lrScale: 1,
  optimizer: { lr: 1e-5, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1, paramGroups: [] },
});
mark('update (forward/backward per micro-batch, AdamW)', { loss: result.loss, gradNorm: result.gradNorm });
engine.dispose();
