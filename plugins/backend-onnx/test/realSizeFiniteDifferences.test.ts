import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { lossTotals, TrainingBatch, type BatchView, type LossFunction, type LoraSettings, type WeightTensor } from '@drmas/core';
import { initLoraAdapter, parseModelConfig, randomInitWeights, SeededRandom, type DecoderConfig } from '@drmas/models';
import { OnnxTrainer } from '../src/training/OnnxTrainer.js';
import { describeSlow } from '../../../test/support/describeSlow.js';
import { PUBLISHED_MODELS } from '../../../test/support/publishedConfigs.js';
import { policyLoss } from './parityFixtures.js';

/**
 * The onnx trainer at a real model's size: Qwen2.5-0.5B's published configuration whole (24 layers, hidden 896, 14
 * query heads over 2 KV heads, a tied vocabulary of 151,936 read through the chunked head, the `shared` weight layout
 * this size gets by default), random weights. The gradient of the RL loss it trains with (the algorithms plugin's
 * policy loss: GPG's advantage-weighted log-likelihood, an entropy bonus and a k3 KL penalty, so the entropy's and the
 * KL's backward through the chunked head count too) is checked element by element against central finite differences
 * of the loss the same trainer computes: a full fine-tune's weights in the first layer, the last layer, the final
 * norm and the tied embedding, and a LoRA adapter's A and B. About 5 GiB and a few minutes: behind DRMAS_SLOW_TESTS.
 */

const MODEL = PUBLISHED_MODELS['Qwen2.5-0.5B']!;
const LOSS: LossFunction = policyLoss({ variant: 'gpg', entropyCoef: 0.01, klCoef: 0.05, klType: 'k3' });
const PROMPTS = [
  [151644, 872, 198, 3838, 374, 220, 17, 488],
  [151644, 872, 198, 22, 353, 220, 21],
];
const RESPONSES = [
  [220, 18, 13, 576, 4226],
  [785, 4226, 374, 220, 19, 15, 151645],
];
/** How far a finite difference may sit from the trainer's gradient, relative to it. */
const TOLERANCE = 0.03;

/** Two rows of a step: advantages of both signs, reference log-probs near a uniform policy's (-ln V). */
function stepView(config: DecoderConfig): BatchView {
  const batch = TrainingBatch.fromSequences(PROMPTS, RESPONSES);
  const R = batch.responseLength;
  batch.oldLogProbs = new Float32Array(batch.rows * R);
  batch.refLogProbs = new Float32Array(batch.rows * R).fill(-Math.log(config.vocabSize) + 0.3);
  for (let r = 0; r < batch.rows; r++) for (let j = 0; j < R; j++) batch.advantages[r * R + j] = r === 0 ? 1.5 : -0.8;
  return batch.all();
}

interface Probe {
  tensor: string;
  /** The element: the one of largest gradient, so that a small step moves the loss far above float32's rounding. */
  index: number;
  gradient: number;
}

/** The largest-gradient element of each named tensor. */
function probes(gradients: Map<string, Float32Array>, tensors: string[]): Probe[] {
  return tensors.map((tensor) => {
    const g = gradients.get(tensor);
    if (!g) throw new Error(`no gradient for ${tensor}; the trainer has ${[...gradients.keys()].slice(0, 5).join(', ')} ...`);
    let index = 0;
    for (let i = 1; i < g.length; i++) if (Math.abs(g[i]!) > Math.abs(g[index]!)) index = i;
    return { tensor, index, gradient: g[index]! };
  });
}

/**
 * (L(w + h) - L(w - h)) / 2h for the probe's element of `values` (the trainer's own buffers, read in place), with h
 * chosen so the loss moves by about 1e-3: float32's rounding of a loss near 10 is 1e-6, and the step stays small
 * against the weights (initializer range 0.02) so the curvature's error is below the tolerance.
 */
async function centralDifference(
  trainer: OnnxTrainer,
  request: Parameters<OnnxTrainer['gradients']>[0],
  values: Float32Array,
  probe: Probe,
) {
  const h = Math.min(5e-3, 1e-3 / Math.abs(probe.gradient));
  const original = values[probe.index]!;
  values[probe.index] = original + h;
  const plus = (await trainer.gradients(request)).loss;
  values[probe.index] = original - h;
  const minus = (await trainer.gradients(request)).loss;
  values[probe.index] = original;
  // The step actually taken in float32 on each side.
  const taken = Math.fround(original + h) - Math.fround(original - h);
  return (plus - minus) / taken;
}

/**
 * The trainer's gradient at the largest-gradient element of each of `tensors` against its central difference, the
 * element read in place from `valuesOf(tensor)` (the trainer's own buffers): the elements off by more than TOLERANCE.
 */
async function checkAgainstDifferences(label: string, trainer: OnnxTrainer, tensors: string[], valuesOf: (tensor: string) => Float32Array) {
  const view = stepView(trainer.config);
  const request = {
    batch: view,
    totals: lossTotals(view, { responseLength: view.batch.responseLength, microBatchSize: view.rows.length }),
    loss: LOSS,
  };
  const first = await trainer.gradients(request);
  const trained = [...first.gradients.keys()];
  const found = [];
  for (const probe of probes(first.gradients, tensors)) {
    const difference = await centralDifference(trainer, request, valuesOf(probe.tensor), probe);
    found.push({ ...probe, difference, relative: Math.abs(difference - probe.gradient) / Math.abs(probe.gradient) });
  }
  console.log(`finite differences, ${label}: ${JSON.stringify(found)}`);
  return { trained, outside: found.filter((f) => !(f.relative < TOLERANCE)) };
}

describeSlow("Qwen2.5-0.5B's published configuration: gradients against central finite differences", () => {
  const config = parseModelConfig(MODEL.config);
  let weights: Map<string, WeightTensor>;

  beforeAll(() => {
    weights = randomInitWeights(config, 7);
  });
  afterAll(() => weights.clear());

  it('a full fine-tune: first and last layer, final norm and the tied embedding (output head)', async () => {
    const trainer = await OnnxTrainer.create(config, weights, {}, { adopt: true });
    try {
      const tensors = [
        'model.layers.0.self_attn.q_proj.weight',
        'model.layers.0.self_attn.k_proj.bias',
        'model.layers.23.mlp.down_proj.weight',
        'model.layers.23.post_attention_layernorm.weight',
        'model.norm.weight',
        'model.embed_tokens.weight',
      ];
      const { outside } = await checkAgainstDifferences('full fine-tune at 0.5B', trainer, tensors, (t) => weights.get(t)!.data);
      expect(outside).toEqual([]);
    } finally {
      await trainer.release();
    }
  }, 1_800_000);

  it('a LoRA adapter on every projection: A and B of the first and last layers', async () => {
    const settings: LoraSettings = {
      rank: 8,
      alpha: 16,
      dropout: 0,
      targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
    };
    const rng = new SeededRandom(11);
    const adapter = initLoraAdapter(config, settings, rng);
    // PEFT's B starts at zero, which would leave A without a gradient: B random too.
    for (const [name, t] of adapter) if (name.endsWith('lora_B.weight')) rng.fillNormal(t.data, 0.02);
    const trainer = await OnnxTrainer.create(config, weights, {}, { adopt: true, lora: { settings, adapter } });
    try {
      const tensors = [
        'model.layers.0.self_attn.q_proj.lora_A.weight',
        'model.layers.0.self_attn.q_proj.lora_B.weight',
        'model.layers.23.mlp.down_proj.lora_A.weight',
        'model.layers.23.mlp.down_proj.lora_B.weight',
      ];
      const { trained, outside } = await checkAgainstDifferences('LoRA at 0.5B', trainer, tensors, (t) => adapter.get(t)!.data);
      expect(trained.every((name) => name.includes('lora_'))).toBe(true);
      expect(outside).toEqual([]);
    } finally {
      await trainer.release();
    }
  }, 1_800_000);
});
