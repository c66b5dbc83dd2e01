import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TrainingBatch, type BatchView } from '@drmas/core';
import { SeededRandom } from '@drmas/models';
import { DecoderModel, selectRuntime, TfjsPolicyBackend } from '@drmas/plugin-backend-tfjs';
import { OnnxTrainer } from '../src/training/OnnxTrainer.js';
import { policyLoss, randomWeights, relativeError, tinyConfigJson, updateRequest, weightedLogLikelihood } from './parityFixtures.js';

/**
 * `UpdateRequest.oldLogProbs: current`: the PPO ratio divides by the update's own log-probs, detached, so its value is
 * 1 and its gradient the policy gradient: d/dθ [-A exp(logp - sg(logp))] = -A dlogp/dθ. The clipped loss's gradient
 * then equals the advantage-weighted log-likelihood's (a different graph), whatever old log-probs the batch holds.
 */
function view(): BatchView {
  const batch = TrainingBatch.fromSequences(
    [[3, 7, 1, 9], [8], [30, 4, 11]],
    [
      [12, 5, 20, 2, 9],
      [30, 4, 11],
      [6, 9, 1, 1],
    ],
  );
  const rng = new SeededRandom(5);
  // Far from the policy's own: against these the ratio would be clipped on most tokens.
  batch.oldLogProbs = Float32Array.from(batch.responseMask, (m) => (m ? -1 - rng.uniform() : 0));
  batch.responseMask.forEach((m, i) => (batch.advantages[i] = m ? rng.uniform() * 2 - 1 : 0));
  return batch.all();
}

describe("oldLogProbs 'current'", () => {
  const { config, weights } = randomWeights(tinyConfigJson('Qwen2ForCausalLM'), 4);
  let onnx: OnnxTrainer;
  let tfjs: TfjsPolicyBackend;
  beforeAll(async () => {
    await selectRuntime('cpu');
    onnx = await OnnxTrainer.create(config, weights);
    tfjs = new TfjsPolicyBackend('tfjs', 'test', DecoderModel.fromTensors(config, weights), undefined);
  });
  afterAll(async () => {
    tfjs.dispose();
    await onnx.release();
  });

  it("onnx: the clipped loss's gradient is the weighted log-likelihood's, its ratio exactly 1 (no token clipped, ppo_kl 0)", async () => {
    const v = view();
    const expected = new Map(
      [...(await onnx.gradients(updateRequest(v, weightedLogLikelihood, 2))).gradients].map(([name, g]) => [name, g.slice()]),
    );
    const current = await onnx.gradients({ ...updateRequest(v, policyLoss(), 2), oldLogProbs: 'current' });
    for (const [name, g] of expected) expect(relativeError(current.gradients.get(name)!, g)).toBeLessThan(1e-5);
    expect(current.metrics.pg_clipfrac).toBe(0);
    expect(current.metrics.ppo_kl).toBe(0);
    // Against the batch's old log-probs the same loss clips and its gradient differs.
    const batch = await onnx.gradients(updateRequest(v, policyLoss(), 2));
    expect(batch.metrics.pg_clipfrac).toBeGreaterThan(0.3);
  });

  it('tfjs takes the same clipped step from its own log-probs as onnx (loss, gradient norm, weights)', async () => {
    const request = { ...updateRequest(view(), policyLoss(), 2), oldLogProbs: 'current' as const };
    const expected = await tfjs.update(request);
    const got = await onnx.update(request);
    expect(Math.abs(got.loss - expected.loss)).toBeLessThan(1e-5 * Math.max(1, Math.abs(expected.loss)));
    expect(Math.abs(got.gradNorm - expected.gradNorm)).toBeLessThan(1e-4 * expected.gradNorm);
    expect(expected.metrics.pg_clipfrac).toBe(0);
    const after = await tfjs.exportWeights();
    for (const [name, t] of after) expect(relativeError(onnx.weights.get(name)!.data, t.data)).toBeLessThan(1e-4);
  });
});
