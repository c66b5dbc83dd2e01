// Proxy of an RL step (rollout + training): node ... rlProxy.mjs <model> <tfjs|onnx> [steps]
// Rollout: 2 agents x batch 16 x 64 new tokens (32-token prompts); then one tfjs training step on those tokens.
// With rollout on onnx, the trainer's weights are synced into the onnx engine after each update.
import { createTfjsPolicyBackend } from '../../plugins/backend-tfjs/src/TfjsPolicyBackend.ts';
import { createOnnxPolicyBackend } from '../../plugins/backend-onnx/src/index.ts';
import { batchFromRollout, emit, generationPrompts, median, policyGradientLoss, updateRequest } from '../lib/workloads.mjs';

const [model = 'tiny', rollout = 'onnx', stepsArg = '3'] = process.argv.slice(2);
const steps = Number(stepsArg);
const trainer = await createTfjsPolicyBackend({ model, seed: 0 });
const engine = rollout === 'onnx' ? await createOnnxPolicyBackend({ model, seed: 0, provider: 'cpu' }) : trainer;
const vocab = trainer.model.config.vocabSize;
const agents = [generationPrompts(vocab, 16), generationPrompts(vocab, 16).map((p) => p.map((x) => (x + 7) % vocab))];
const microBatchSize = model === 'small' ? 2 : 8;

async function step(i) {
  const t0 = performance.now();
  const responses = [];
  for (const prompts of agents) {
    const out = await engine.generate({ prompts, maxNewTokens: 64, seed: 10 + i, temperature: 1, stopTokenIds: [] });
    responses.push(...out.tokenIds);
  }
  const t1 = performance.now();
  await trainer.update(updateRequest(batchFromRollout(agents.flat(), responses), policyGradientLoss, microBatchSize));
  const t2 = performance.now();
  if (engine !== trainer) await engine.syncWeights(trainer);
  const t3 = performance.now();
  return { rollout: (t1 - t0) / 1000, train: (t2 - t1) / 1000, sync: (t3 - t2) / 1000, total: (t3 - t0) / 1000 };
}

await step(0);
const results = [];
for (let i = 1; i <= steps; i++) results.push(await step(i));
const pick = (k) => median(results.map((r) => r[k]));
emit({
  engine: rollout,
  bench: 'rl-proxy',
  model,
  runtime: engine.runtime,
  trainer: trainer.runtime,
  agents: 2,
  batchPerAgent: 16,
  promptTokens: 32,
  newTokens: 64,
  repeats: steps,
  rolloutSeconds: pick('rollout'),
  trainSeconds: pick('train'),
  syncSeconds: pick('sync'),
  stepSeconds: pick('total'),
});
trainer.dispose();
if (engine !== trainer) engine.dispose();
