import { longestResponse, lossTotals, TrainingBatch } from '@drmas/core';

// Workloads shared by the engine scripts (and mirrored in bench/pytorch/reference_decoder.py).

/** Shapes of the built-in models (models/src/builtin/builtinModels.ts). */
export const MODEL_SHAPES = {
  tiny: { hidden: 256, layers: 4, heads: 4, kvHeads: 2, intermediate: 704, vocab: 512 },
  small: { hidden: 512, layers: 8, heads: 8, kvHeads: 4, intermediate: 1408, vocab: 4096 },
};

export const GENERATION = { batch: 32, promptTokens: 32, newTokens: 96 };
export const TRAINING = { rows: 32, promptTokens: 32, responseTokens: 224 };

/** Batch-32 prompts of 32 tokens, deterministic. */
export function generationPrompts(vocab, rows = GENERATION.batch, length = GENERATION.promptTokens) {
  return Array.from({ length: rows }, (_, r) => Array.from({ length }, (_, j) => (r * 31 + j * 17) % vocab));
}

/** Advantage-weighted token-mean log-likelihood: the shape of a policy-gradient loss. */
export const policyGradientLoss = {
  compute(ops, input) {
    const weighted = ops.mul(ops.mul(input.logProbs, input.advantages), input.responseMask);
    return { loss: ops.div(ops.neg(ops.sum(weighted)), input.totals.tokens), metrics: {} };
  },
};

/** A view of `rows` x (prompt + response) pseudo-random tokens (same LCG as the PyTorch reference). */
export function trainingBatch(rows, promptLength, responseLength, vocab) {
  let seed = 7;
  const next = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8) % vocab;
  const prompts = Array.from({ length: rows }, () => Int32Array.from({ length: promptLength }, next));
  const responses = Array.from({ length: rows }, () => Int32Array.from({ length: responseLength }, next));
  const batch = TrainingBatch.fromSequences(prompts, responses);
  batch.advantages.forEach((_, i) => {
    batch.advantages[i] = ((i % 7) - 3) / 3;
  });
  return batch.all();
}

/** A rollout's tokens as a training batch (prompts + generated responses, right-padded). */
export function batchFromRollout(prompts, responses) {
  const batch = TrainingBatch.fromSequences(prompts, responses);
  batch.advantages.forEach((_, i) => {
    batch.advantages[i] = ((i % 5) - 2) / 2;
  });
  return batch.all();
}

/** One optimizer step of AdamW at `lr` over the view's rows. */
export function updateRequest(view, loss, microBatchSize, lr = 1e-5) {
  return {
    batch: view,
    totals: lossTotals(view, { responseLength: longestResponse(view), microBatchSize }),
    loss,
    microBatchSize,
    lrScale: 1,
    optimizer: { lr, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1, paramGroups: [] },
  };
}

export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * The training measurement every engine script makes: one warm-up update on a small batch (it builds the sessions or
 * kernels), then `repeats` full updates of the TRAINING batch, timed; the record's common fields, CPU seconds (user +
 * system, every thread of this process) per update included.
 */
export async function measureUpdates(backend, vocab, microBatchSize, repeats) {
  await backend.update(updateRequest(trainingBatch(2, 8, 8, vocab), policyGradientLoss, 2));
  const batch = trainingBatch(TRAINING.rows, TRAINING.promptTokens, TRAINING.responseTokens, vocab);
  const times = [];
  const cpu = process.cpuUsage();
  for (let i = 0; i < repeats; i++) {
    const t = performance.now();
    await backend.update(updateRequest(batch, policyGradientLoss, microBatchSize));
    times.push((performance.now() - t) / 1000);
  }
  const { user, system } = process.cpuUsage(cpu);
  const seconds = median(times);
  const tokensPerRow = TRAINING.promptTokens + TRAINING.responseTokens;
  return {
    bench: 'train',
    runtime: backend.runtime,
    rows: TRAINING.rows,
    tokensPerRow,
    microBatchSize,
    repeats,
    seconds,
    cpuSeconds: (user + system) / 1e6 / repeats,
    tokensPerSecond: (TRAINING.rows * tokensPerRow) / seconds,
  };
}

/** Prints one measurement as a JSON line, with this process's peak resident memory so far. */
export function emit(record) {
  console.log(JSON.stringify({ ...record, peakRssMiB: +(process.resourceUsage().maxRSS / 1024).toFixed(1) }));
}

/** A model's shape as MODEL_SHAPES gives it, from a DecoderConfig (config.json as @drmas/models reads it). */
export function shapeOf(config) {
  return {
    hidden: config.hiddenSize,
    layers: config.numLayers,
    heads: config.numHeads,
    kvHeads: config.numKvHeads,
    headDim: config.headDim,
    intermediate: config.intermediateSize,
    vocab: config.vocabSize,
  };
}

/** Nominal matmul FLOPs of the model (projections, lm head, attention products). */
function perToken(s) {
  const d = s.headDim ?? s.hidden / s.heads;
  const layer = s.hidden * s.heads * d + 2 * s.hidden * s.kvHeads * d + s.heads * d * s.hidden + 3 * s.hidden * s.intermediate;
  return { body: 2 * s.layers * layer, head: 2 * s.hidden * s.vocab, attentionPerKey: 4 * s.layers * s.heads * d };
}

/** FLOPs of one generation run: every prompt and generated token through the body, the head on generated ones. */
export function generationFlops(model) {
  const s = MODEL_SHAPES[model];
  const f = perToken(s);
  const columns = GENERATION.promptTokens + GENERATION.newTokens - 1;
  const keys = (columns * (columns + 1)) / 2;
  return GENERATION.batch * (columns * f.body + GENERATION.newTokens * f.head + keys * f.attentionPerKey);
}

/** FLOPs of one training step: 3x the forward pass (forward + backward) over 256 tokens per row. */
export function trainingFlops(model) {
  return decoderTrainingFlops(MODEL_SHAPES[model], TRAINING.rows, TRAINING.promptTokens + TRAINING.responseTokens);
}

/**
 * FLOPs of a forward and backward pass (3x the forward) of `rows` rows of `columns` tokens on a model of `shape`
 * (MODEL_SHAPES' fields, `headDim` where it is not hidden / heads), the head counted on every token.
 */
export function decoderTrainingFlops(shape, rows, columns) {
  const f = perToken(shape);
  return 3 * rows * (columns * (f.body + f.head) + ((columns * (columns + 1)) / 2) * f.attentionPerKey);
}
