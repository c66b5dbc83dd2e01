// drmas's onnx engine on a model folder: generation and training tokens per second, the drmas side of
// bench/sizes/againstTorch.mjs (the PyTorch side is bench/sizes/torch_tokens.py, same workload and same tokens).
//
//   node bench/sizes/tokensPerSecond.mjs generate MODEL_DIR ROWS PROMPT_TOKENS NEW_TOKENS
//   node bench/sizes/tokensPerSecond.mjs train MODEL_DIR ROWS PROMPT_TOKENS RESPONSE_TOKENS
//
// generate: the engine `drmas train` samples with, ROWS rows of PROMPT_TOKENS prompt tokens, exactly NEW_TOKENS new
// tokens each at temperature 1 (no stop token); a 2-token call first, so the timed call starts warm.
// train: the onnx trainer's update of a policy-gradient step over ROWS rows of PROMPT + RESPONSE tokens, with the
// memory budget `drmas train` takes by default (75% of the machine; MEMORY_BUDGET, such as 12GiB, sets it) choosing
// the micro-batches and the backward's segments; two updates, the second timed, the first's loss and gradient norm
// printed (the PyTorch side's, from the same weights, agree: test/interop/againstTorchWorkload.test.ts). LORA=R
// trains a LoRA adapter of rank R (alpha 2R, no dropout, every projection, PEFT's initialization) on the frozen base
// instead of every weight; SEGMENTS sets the backward's segments (`models.<id>.backwardSegments`: auto, the default,
// or a number).
// Prints one JSON line: seconds, tokens (generated; or every prompt and response token trained), tokens per second,
// peak resident set.
import { totalmem } from 'node:os';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_MEMORY_SHARE, LORA_TARGET_MODULES, lossTotals, parseByteSize, TrainingBatch } from '@drmas/core';
import { initLoraAdapter, loadModelWeights, SeededRandom } from '@drmas/models';
import { createOnnxPolicyBackend, OnnxTrainer } from '@drmas/plugin-backend-onnx';
import { policyGradientLoss } from '../lib/workloads.mjs';
import { memory, segmentsFromEnv, sizeTokens } from './phases.mjs';

const [mode, model, ...numbers] = process.argv.slice(2);
const [rows, promptTokens, newTokens] = numbers.map(Number);
if (!['generate', 'train'].includes(mode) || !model || !(newTokens > 0)) {
  console.error('usage: node bench/sizes/tokensPerSecond.mjs generate|train MODEL_DIR ROWS PROMPT_TOKENS NEW_OR_RESPONSE_TOKENS');
  process.exit(2);
}
if (!existsSync(join(model, 'config.json'))) {
  console.error(`bench/sizes/tokensPerSecond: ${model} holds no config.json (a model folder as transformers saves it)`);
  process.exit(2);
}

const peakRssGiB = () => memory().hwm;

async function generate() {
  const engine = await createOnnxPolicyBackend({ model, provider: 'cpu' });
  const input = sizeTokens(rows, promptTokens, 0, engine.vocabSize).prompts.map((p) => [...p]);
  const request = { prompts: input, temperature: 1, seed: 0, stopTokenIds: [] };
  await engine.generate({ ...request, maxNewTokens: 2 });
  const started = performance.now();
  const sampled = await engine.generate({ ...request, maxNewTokens: newTokens });
  const seconds = (performance.now() - started) / 1000;
  engine.dispose();
  return { seconds, tokens: sampled.tokenIds.reduce((sum, t) => sum + t.length, 0), setting: 'defaults', runtime: engine.runtime };
}

async function train() {
  const { config, weights } = await loadModelWeights({ model });
  const memoryBudget = process.env.MEMORY_BUDGET ? parseByteSize(process.env.MEMORY_BUDGET) : DEFAULT_MEMORY_SHARE * totalmem();
  const rank = Number(process.env.LORA ?? 0);
  const settings = { rank, alpha: 2 * rank, dropout: 0, targetModules: LORA_TARGET_MODULES };
  const lora = rank > 0 ? { settings, adapter: initLoraAdapter(config, settings, new SeededRandom(0)) } : undefined;
  const backwardSegments = segmentsFromEnv();
  const trainer = await OnnxTrainer.create(config, weights, {}, { adopt: true, memoryBudget, lora, backwardSegments });
  const { prompts, responses } = sizeTokens(rows, promptTokens, newTokens, config.vocabSize);
  const batch = TrainingBatch.fromSequences(prompts, responses);
  batch.advantages.forEach((_, i) => (batch.advantages[i] = ((i % 7) - 3) / 3));
  const view = batch.all();
  const request = {
    batch: view,
    totals: lossTotals(view, { responseLength: newTokens, microBatchSize: rows }),
    loss: policyGradientLoss,
    microBatchSize: rows,
    lrScale: 1,
    optimizer: { lr: 1e-5, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1, paramGroups: [] },
  };
  const first = await trainer.update(request);
  const started = performance.now();
  const result = await trainer.update(request);
  const seconds = (performance.now() - started) / 1000;
  await trainer.release();
  const setting = `${lora ? `LoRA rank ${rank}, ` : ''}budget ${(memoryBudget / 2 ** 30).toFixed(1)} GiB, segments ${JSON.stringify(trainer.segments)}, ${result.metrics['actor/micro_batches']} micro-batch(es)`;
  return { seconds, tokens: rows * (promptTokens + newTokens), setting, firstLoss: first.loss, firstGradNorm: first.gradNorm };
}

const { seconds, tokens, setting, runtime, ...first } = mode === 'generate' ? await generate() : await train();
console.log(
  JSON.stringify({
    engine: 'drmas',
    mode,
    setting,
    seconds: +seconds.toFixed(3),
    tokens,
    tokensPerSecond: +(tokens / seconds).toFixed(2),
    peakRssGiB: peakRssGiB(),
    ...(runtime && { runtime }),
    ...first,
  }),
);
