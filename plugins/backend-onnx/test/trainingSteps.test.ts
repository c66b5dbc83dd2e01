import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TrainingBatch, type BatchView, type WeightTensor } from '@drmas/core';
import { SeededRandom } from '@drmas/models';
import { DecoderModel, selectRuntime, TfjsPolicyBackend } from '@drmas/plugin-backend-tfjs';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { OnnxTrainer } from '../src/training/OnnxTrainer.js';
import { ARCHITECTURE_CASES, policyLoss, randomWeights, relativeError, tinyConfigJson, updateRequest } from './parityFixtures.js';

/**
 * Three full training steps (loss, gradients over two micro-batches, global-norm clipping, AdamW with a param group
 * and a schedule scale) of `OnnxTrainer.update` against the tfjs backend's `update` from the same weights: losses,
 * gradient norms and every weight after each step within 1e-4 relative (to the tensor's largest weight).
 */

const loss = policyLoss();

/** Each step's batch: fixed token sequences, old log-probs and advantages drawn per step. */
function stepView(step: number): BatchView {
  const batch = TrainingBatch.fromSequences(
    [[3, 7, 1, 9], [8], [30, 4, 11]],
    [
      [12, 5, 20, 2, 9],
      [30, 4, 11],
      [6, 9, 1, 1],
    ],
    { temperatures: [1, 0.8, 1] },
  );
  const rng = new SeededRandom(100 + step);
  batch.oldLogProbs = Float32Array.from(batch.responseMask, (m) => (m ? -3.9 + (rng.uniform() - 0.5) : 0));
  batch.responseMask.forEach((m, i) => (batch.advantages[i] = m ? rng.uniform() * 2 - 1 : 0));
  return batch.all();
}

/**
 * The largest, over tensors, difference of the two engines' weights relative to the tensor's scale (`error`), and the
 * smallest, over tensors, movement of the tfjs weights from `start` on the same scale (`moved`: the steps changed
 * every tensor by far more than the error allowed).
 */
function compareWeights(onnx: Map<string, WeightTensor>, tfjs: Map<string, WeightTensor>, start: Map<string, WeightTensor>) {
  let error = 0;
  let moved = Infinity;
  for (const [name, t] of tfjs) {
    error = Math.max(error, relativeError(onnx.get(name)!.data, t.data));
    moved = Math.min(moved, relativeError(start.get(name)!.data, t.data));
  }
  return { error, moved };
}

const QUICK = 'Qwen2 (q/k/v bias), tied';
describe.each(ARCHITECTURE_CASES.filter((c) => c.label === QUICK))('three training steps, onnx vs tfjs: $label', (c) => threeSteps(c));
describeSlow.each(ARCHITECTURE_CASES.filter((c) => c.label !== QUICK))('three training steps, onnx vs tfjs (slow): $label', (c) =>
  threeSteps(c),
);

function threeSteps({ architecture, extra }: (typeof ARCHITECTURE_CASES)[number]): void {
  let tfjs: TfjsPolicyBackend;
  let onnx: OnnxTrainer;
  let start: Map<string, WeightTensor>;
  beforeAll(async () => {
    await selectRuntime('cpu');
    const { config, weights } = randomWeights(tinyConfigJson(architecture, extra), 9);
    start = weights;
    tfjs = new TfjsPolicyBackend('tfjs', 'test', DecoderModel.fromTensors(config, weights), undefined);
    onnx = await OnnxTrainer.create(config, weights);
  });
  afterAll(async () => {
    tfjs.dispose();
    await onnx.release();
  });

  it('takes the same three steps: loss, gradient norm (clipped), AdamW with a param group', async () => {
    for (let step = 0; step < 3; step++) {
      const view = stepView(step);
      const request = updateRequest(view, loss, 2, {
        optimizer: { lr: 2e-3, maxGradNorm: 0.5, paramGroups: [{ params: ['*norm*'], weightDecay: 0, lr: 5e-3 }] },
        lrScale: 0.75,
      });
      const expected = await tfjs.update(request);
      const got = await onnx.update(request);
      expect(got.skipped).toBe(false);
      expect(Math.abs(got.loss - expected.loss)).toBeLessThan(1e-4 * Math.max(1, Math.abs(expected.loss)));
      expect(Math.abs(got.gradNorm - expected.gradNorm)).toBeLessThan(1e-4 * expected.gradNorm);
      // Clipping is active: the norm is above maxGradNorm.
      expect(expected.gradNorm).toBeGreaterThan(0.5);
      const weights = compareWeights(onnx.weights, await tfjs.exportWeights(), start);
      expect(weights.error).toBeLessThan(1e-4);
      expect(weights.moved).toBeGreaterThan(1e-3 * (step + 1));
    }
  });
}
