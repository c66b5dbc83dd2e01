// The tinker backend's cost over the local engine it runs on: one update (forward, the loss's gradient on the
// client, forward_backward, optim_step, all over loopback HTTP with futures polled) and one generation (a request
// per prompt, batched again by the server) through an in-process drmas tinker-server on onnx, against the same
// onnx engine called directly, on the built-in model.
// usage: npm run build && node bench/tinker.mjs [--rounds 5] [--model tiny] [--rows 16]
// Prints one JSON line per round and a summary of medians.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { builtinTokenizer, readModelShape } from '@drmas/models';
import { createOnnxPolicyBackend } from '@drmas/plugin-backend-onnx';
import { openLocalEngines, TinkerClient, TinkerPolicyBackend, TinkerServer, TrainingModels } from '@drmas/plugin-backend-tinker';
import { emit, generationPrompts, median, policyGradientLoss, trainingBatch, updateRequest } from './lib/workloads.mjs';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    model: { type: 'string', default: 'tiny' },
    rows: { type: 'string', default: '16' },
  },
});
const rounds = Number(values.rounds);
const rows = Number(values.rows);
const model = values.model;
const SEED = 1;

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'drmas-tinker-bench-'));
const engines = await openLocalEngines({ cwd: process.cwd(), engine: 'onnx', seed: SEED, log: () => undefined, dataDir });
const server = new TinkerServer(new TrainingModels(engines.open, dataDir, [model]), {
  host: '127.0.0.1',
  port: 0,
  policy: { delayMs: 0, holdMs: 1000, pending: 'try_again', keepMs: 600_000 },
});
const url = await server.start();
const shape = readModelShape(model);
const client = new TinkerClient({
  baseUrl: url,
  timeoutMs: 60_000,
  retries: 0,
  retryDelayMs: 100,
  futureTimeoutMs: 600_000,
  pollIntervalMs: 5,
  resubmits: 0,
});
const tinker = await TinkerPolicyBackend.create({
  name: 'tinker:bench',
  client,
  baseModel: model,
  loraRank: 8,
  tokenizer: builtinTokenizer(shape.vocabSize),
  vocabSize: shape.vocabSize,
  key: 'models.bench.tinker',
});
const local = await createOnnxPolicyBackend({ name: 'onnx:bench', model, seed: SEED });

const view = trainingBatch(rows, 32, 64, shape.vocabSize);
const prompts = generationPrompts(shape.vocabSize, rows, 32);
const timed = async (f) => {
  const t0 = performance.now();
  await f();
  return (performance.now() - t0) / 1000;
};
const sample = (engine) => engine.generate({ prompts, maxNewTokens: 32, temperature: 1, seed: 3 });

// Warm-up: each engine builds its training graph on its first update.
await local.update(updateRequest(view, policyGradientLoss, rows));
await tinker.update(updateRequest(view, policyGradientLoss, rows));
const results = { localUpdate: [], tinkerUpdate: [], localGenerate: [], tinkerGenerate: [] };
for (let round = 0; round < rounds; round++) {
  const record = {
    round,
    localUpdate: await timed(() => local.update(updateRequest(view, policyGradientLoss, rows))),
    tinkerUpdate: await timed(() => tinker.update(updateRequest(view, policyGradientLoss, rows))),
    localGenerate: await timed(() => sample(local)),
    tinkerGenerate: await timed(() => sample(tinker)),
  };
  for (const key of Object.keys(results)) results[key].push(record[key]);
  emit(record);
}
const m = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, +median(v).toFixed(3)]));
console.log(
  `\n${model}, ${rows} rows (32 prompt + 64 response tokens to train; 32 new tokens to sample), medians of ${rounds} rounds:\n` +
    `  update:   local onnx ${m.localUpdate} s, tinker over loopback ${m.tinkerUpdate} s (${(m.tinkerUpdate / m.localUpdate).toFixed(2)}x)\n` +
    `  generate: local onnx ${m.localGenerate} s, tinker over loopback ${m.tinkerGenerate} s (${(m.tinkerGenerate / m.localGenerate).toFixed(2)}x)\n` +
    `  polls answered try_again: ${client.stats.tryAgain}`,
);
local.dispose();
await server.stop();
