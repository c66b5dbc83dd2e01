import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import path from 'node:path';
import { createKernel, WorkerGroups } from '@drmas/core';
import type { TrainedWorkerGroup } from '../src/index.js';
import type { TempProject } from '../../../test/support/tempProject.js';
import { stableLines } from '../../../test/reliability/support/runFileComparison.js';
import { toyProject } from './toyRollout.js';

/** The toy loop on onnx with a KL penalty against the frozen initial model, its reference held in `precision`. */
function klProject(name: string, precision: 'float16' | 'float32'): TempProject {
  const model = { model: 'tiny', backend: 'onnx', threads: 1, referencePrecision: precision, optimizer: { lr: 3e-2 } };
  return toyProject(name, {
    plugins: ['algorithms', 'backend-onnx', 'trainer', './toy-rollout.js'],
    models: { left: model, right: model },
    algorithm: { advantage: 'grpo', loss: { klCoef: 0.5, klType: 'kl' } },
    trainer: { seed: 3, steps: 2, logRollouts: 0 },
  });
}

/** The run's metrics, and the bytes of weights each group's reference engine held during step 1. */
async function train(project: TempProject): Promise<{ metrics: Array<Record<string, number>>; referenceBytes: Record<string, number> }> {
  const runDir = project.path('run');
  const { kernel } = await createKernel({ cwd: project.dir });
  const referenceBytes: Record<string, number> = {};
  kernel.hooks.afterStep.tap('test-reference', (result) => {
    if (result.step !== 1) return;
    for (const group of kernel.get(WorkerGroups).all() as TrainedWorkerGroup[]) {
      const reference = group.reference;
      referenceBytes[group.id] =
        reference && 'weightBytes' in reference && typeof reference.weightBytes === 'number' ? reference.weightBytes : NaN;
    }
  });
  await kernel.run({ runDir, log: () => {} });
  const metrics = stableLines(path.join(runDir, 'metrics.jsonl')).map((line) => JSON.parse(line) as Record<string, number>);
  return { metrics, referenceBytes };
}

describe('a KL penalty against a float16 reference on onnx', () => {
  let half: TempProject;
  let full: TempProject;
  beforeAll(() => {
    half = klProject('kl-half', 'float16');
    full = klProject('kl-full', 'float32');
  });
  afterAll(() => {
    half.dispose();
    full.dispose();
  });

  test('the KL of a 2-step run is the float32 reference one within float16 rounding of the weights', async () => {
    const [a, b] = [await train(half), await train(full)];
    // tiny's 3,215,616 weights: 2 bytes each in float16; in float32 4, and 4 again for the fused layout's stacked
    // copy of q|k|v (with biases) and gate|up, 4 layers x (65,536 + 2 x 32,768 + 512 + 2 x 180,224) = 1,968,128.
    const tinyValues = 3_215_616;
    const tinyStacked = 1_968_128;
    for (const id of ['left', 'right']) {
      expect([a.referenceBytes[id], b.referenceBytes[id]]).toEqual([2 * tinyValues, 4 * (tinyValues + tinyStacked)]);
      const metric = (run: typeof a, step: number, name: string) => run.metrics[step]![`actor/${id}/${name}`]!;
      // k1's gradient (of logp - ref) does not depend on the reference's values: both runs take the same updates and
      // sample the same step-2 batch, so their KL differs only by the reference's log-probs.
      expect(metric(a, 0, 'grad_norm')).toBe(metric(b, 0, 'grad_norm'));
      expect(metric(a, 1, 'grad_norm')).toBe(metric(b, 1, 'grad_norm'));
      // Step 1: the policy is the reference; float32 scores it to float32 rounding of the two graphs, float16 off by
      // the rounding of the weights.
      expect(Math.abs(metric(b, 0, 'kl_loss'))).toBeLessThan(1e-6);
      expect(Math.abs(metric(a, 0, 'kl_loss'))).toBeGreaterThan(1e-6);
      // A token mean of the reference's drift, each within ~1e-3 (1/8 of bfloat16's on a random model: halfWeights.test.ts).
      expect(metric(b, 1, 'kl_loss')).toBeGreaterThan(0.05);
      expect(Math.abs(metric(a, 1, 'kl_loss') - metric(b, 1, 'kl_loss'))).toBeLessThan(1e-3);
    }
  });
});
