import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { readSafetensorsHeader } from '@drmas/models';
import { TempProject } from '../../../test/support/tempProject.js';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { lines, train, withoutTimings, type Line } from './trainingRuns.js';

/**
 * `models.policy.backend: onnx` trains the math preset from the CLI (the built bin, as a user runs it): its first
 * step's loss and gradient norm equal a tfjs-trained run's within 1e-3 relative (the same rollouts: both engines
 * sample the same tokens from the same weights), its checkpoints carry the optimizer state in the tfjs backend's
 * files, a resume from its step-1 checkpoint on onnx gives the uninterrupted run's step 2 exactly, and the tfjs run's step-1 checkpoint (weights and AdamW state) resumed on onnx reproduces the tfjs run's
 * step 2 within 1e-3.
 */

const project = new TempProject('onnx-training');
const CONFIG = path.resolve('examples/math/drmas.config.json');
const RUN = [
  'train',
  '--config',
  CONFIG,
  '--set',
  'trainer.steps=2',
  '--set',
  'trainer.saveEvery=1',
  '--set',
  'eval.atStart=false',
  '--set',
  'eval.atEnd=false',
  '--set',
  'rollout.promptsPerStep=4',
  '--set',
  'rollout.samplesPerPrompt=4',
];
/** onnx on two intra-op threads, whatever the machine: its gradients repeat bit for bit on several threads. */
const backend = (name: string) => [
  '--set',
  `models.policy.backend=${name}`,
  ...(name === 'onnx' ? ['--set', 'models.policy.threads=2'] : []),
];

const onnxRun = project.path('onnx');
const tfjsRun = project.path('tfjs');
afterAll(() => project.dispose());

/** Resumes a copy of `run` (named `copy`) on onnx from its step-1 checkpoint: `run`'s step 2 and the copy's. */
function resumeOnOnnx(run: string, copy: string): { step2: Line; again: Line } {
  const dir = project.path(copy);
  cpSync(run, dir, { recursive: true });
  train([...RUN, ...backend('onnx'), '--resume', path.join(dir, 'checkpoints', 'step-000001')]);
  const [, step2] = lines(run);
  const [, again] = lines(dir);
  expect(again!.step).toBe(2);
  return { step2: step2!, again: again! };
}

const relative = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(b), 1e-12);

// Two CLI runs and two resumes, about 30 s: with the slow tests (the engines' agreement is checked op by op, step by
// step and on resume in trainingGradients, trainingSteps and trainingState, in the default run).
describeSlow('models.policy.backend: onnx trains (slow)', () => {
  beforeAll(() => {
    train([...RUN, ...backend('onnx'), '--run-dir', onnxRun]);
    train([...RUN, ...backend('tfjs'), '--run-dir', tfjsRun]);
  }, 120_000);

  test("step 1's loss and gradient norm equal the tfjs run's within 1e-3 relative; step 2 trains too", () => {
    const [onnx1, onnx2] = lines(onnxRun);
    const [tfjs1] = lines(tfjsRun);
    expect(relative(onnx1!['actor/policy/loss']!, tfjs1!['actor/policy/loss']!)).toBeLessThan(1e-3);
    expect(relative(onnx1!['actor/policy/grad_norm']!, tfjs1!['actor/policy/grad_norm']!)).toBeLessThan(1e-3);
    // The comparison is not vacuous: both steps computed a loss with a gradient (rows with nonzero advantages).
    expect(tfjs1!['actor/policy/grad_norm']).toBeGreaterThan(0.01);
    expect(onnx2!['actor/policy/grad_norm']).toBeGreaterThan(0.01);
  });

  test('the onnx checkpoint carries float32 weights (the base is bfloat16) and the optimizer state in the tfjs files', async () => {
    const checkpoint = path.join(onnxRun, 'checkpoints', 'step-000001', 'policy');
    const meta = JSON.parse(readFileSync(path.join(checkpoint, 'optimizer.json'), 'utf8')) as { type: string; step: number };
    expect(meta).toMatchObject({ type: 'adamw', step: 1 });
    expect(existsSync(path.join(checkpoint, 'optimizer.safetensors'))).toBe(true);
    const { tensors } = await readSafetensorsHeader(path.join(checkpoint, 'model.safetensors'));
    expect(new Set([...tensors.values()].map((t) => t.dtype))).toEqual(new Set(['F32']));
  });

  test("a resume from the onnx run's step-1 checkpoint on onnx gives the uninterrupted run's step 2 exactly", () => {
    const { step2, again } = resumeOnOnnx(onnxRun, 'resumed');
    expect(withoutTimings(again)).toEqual(withoutTimings(step2));
  });

  test("a tfjs step-1 checkpoint resumes on onnx: step 2 equals the tfjs run's within 1e-3 relative", () => {
    const { step2, again } = resumeOnOnnx(tfjsRun, 'crossed');
    expect(again['agent/solver/turns']).toBe(step2['agent/solver/turns']);
    expect(relative(again['actor/policy/loss']!, step2['actor/policy/loss']!)).toBeLessThan(1e-3);
    expect(relative(again['actor/policy/grad_norm']!, step2['actor/policy/grad_norm']!)).toBeLessThan(1e-3);
  });
});
