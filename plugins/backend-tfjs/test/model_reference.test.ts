import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ArchitectureName } from '@drmas/models';
import { selectRuntime } from '../src/runtime/RuntimeSelector.js';
import { saveDecoderModel, loadDecoderModel } from '../src/model/modelCheckpoint.js';
import type { DecoderModel } from '../src/model/DecoderModel.js';
import { batchLogits, maxAbsDiff, randomModel, tinyConfigJson } from './modelFixtures.js';

const PYTHON = '/usr/bin/python3';
const SCRIPT = join(fileURLToPath(new URL('.', import.meta.url)), 'reference', 'model_reference.py');
const hasTorch = spawnSync(PYTHON, ['-c', 'import torch, numpy'], { encoding: 'utf8' }).status === 0;
if (!hasTorch) console.warn(`model_reference.test: ${PYTHON} lacks torch; the PyTorch reference comparisons are skipped`);
const withTorch = hasTorch ? it : it.skip;

// Rows of different lengths: the TS side runs them as one left-padded batch, the reference runs each unpadded.
const ROWS = [
  [3, 17, 5, 40, 9, 22, 31, 1, 7, 12],
  [8, 2, 44],
  [30, 11, 6, 19, 25, 0],
];
// float32 (TS) against float64 (reference) through 2 layers with O(1) activations: ~1e-6 observed, 1e-4 allowed.
const TOLERANCE = 1e-4;

let dir: string;
const models = new Map<string, DecoderModel>();
beforeAll(async () => {
  await selectRuntime('wasm');
  dir = mkdtempSync(join(tmpdir(), 'drmas-model-ref-'));
  for (const [label, arch, extra] of cases) {
    const model = randomModel(tinyConfigJson(arch, extra), 7);
    await saved(label.replace(/\W+/g, '_'), model);
    models.set(label, model);
  }
  const qwen2 = randomModel(tinyConfigJson('Qwen2ForCausalLM'), 9);
  await saved('qwen2_bias', qwen2);
  models.set('qwen2_bias', qwen2);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the reference once over every saved checkpoint (one Python start-up for the whole file). */
let referenceLogits: Record<string, number[][][]> | undefined;
function reference(checkpoint: string): number[][][] {
  if (!referenceLogits) {
    const run = spawnSync(PYTHON, [SCRIPT, JSON.stringify(ROWS), ...checkpoints], { encoding: 'utf8', maxBuffer: 1 << 28 });
    if (run.status !== 0) throw new Error(`reference failed: ${run.stderr}`);
    referenceLogits = JSON.parse(run.stdout) as Record<string, number[][][]>;
  }
  const logits = referenceLogits[checkpoint];
  if (logits === undefined) throw new Error(`the reference reported no logits for ${checkpoint}`);
  return logits;
}

const checkpoints: string[] = [];
async function saved(name: string, model: DecoderModel): Promise<string> {
  const path = join(dir, name);
  await saveDecoderModel(path, model);
  checkpoints.push(path);
  return path;
}

const SCALING = {
  rope_scaling: { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 64 },
};

const cases: [string, ArchitectureName, Record<string, unknown>][] = [
  ['llama', 'LlamaForCausalLM', {}],
  ['llama3 rope scaling', 'LlamaForCausalLM', SCALING],
  ['llama tied + attention_bias + mlp_bias', 'LlamaForCausalLM', { tie_word_embeddings: true, attention_bias: true, mlp_bias: true }],
  ['qwen2 (q/k/v bias)', 'Qwen2ForCausalLM', {}],
  ['qwen2 tied', 'Qwen2ForCausalLM', { tie_word_embeddings: true }],
  ['qwen3 (q/k norm, explicit head_dim)', 'Qwen3ForCausalLM', {}],
];

describe('decoder forward against the float64 PyTorch reference', () => {
  for (const [label] of cases) {
    withTorch(`${label} matches`, async () => {
      const model = models.get(label)!;
      const path = join(dir, label.replace(/\W+/g, '_'));
      const ours = batchLogits(model, ROWS);
      expect(maxAbsDiff(ours, reference(path))).toBeLessThan(TOLERANCE);
      // The reloaded checkpoint gives identical logits.
      const { model: reloaded } = await loadDecoderModel(path);
      expect(maxAbsDiff(batchLogits(reloaded, ROWS), ours)).toBe(0);
      model.dispose();
      reloaded.dispose();
    });
  }
});

describe('each distinguishing feature changes the logits', () => {
  async function differsWhen(arch: ArchitectureName, extra: Record<string, unknown>, tensorSuffix: string, value: number) {
    const model = randomModel(tinyConfigJson(arch, extra), 11);
    const before = batchLogits(model, ROWS);
    const changed = new Map(await model.exportTensors());
    let touched = 0;
    for (const [name, t] of changed) {
      if (!name.endsWith(tensorSuffix)) continue;
      t.data.fill(value);
      touched++;
    }
    expect(touched).toBeGreaterThan(0);
    model.assignTensors(changed);
    const diff = maxAbsDiff(batchLogits(model, ROWS), before);
    model.dispose();
    return diff;
  }

  it('qwen2 q/k/v biases', async () => {
    expect(await differsWhen('Qwen2ForCausalLM', {}, 'q_proj.bias', 0)).toBeGreaterThan(1e-2);
    expect(await differsWhen('Qwen2ForCausalLM', {}, 'k_proj.bias', 0)).toBeGreaterThan(1e-2);
    expect(await differsWhen('Qwen2ForCausalLM', {}, 'v_proj.bias', 0)).toBeGreaterThan(1e-2);
  });

  it('qwen3 q/k norms', async () => {
    expect(await differsWhen('Qwen3ForCausalLM', {}, 'q_norm.weight', 1)).toBeGreaterThan(1e-2);
    expect(await differsWhen('Qwen3ForCausalLM', {}, 'k_norm.weight', 1)).toBeGreaterThan(1e-2);
  });

  it('tied embeddings: no lm_head, the embedding is the output projection', async () => {
    const model = randomModel(tinyConfigJson('Qwen2ForCausalLM', { tie_word_embeddings: true }), 3);
    expect(model.weights.has('lm_head.weight')).toBe(false);
    expect(model.lmHeadWeight).toBe(model.weights.get('model.embed_tokens.weight'));
    model.dispose();
  });

  withTorch('llama3 rope scaling: dropping it from our config no longer matches the reference', async () => {
    // Same seed, same weights; only the config lacks rope_scaling.
    const unscaled = randomModel(tinyConfigJson('LlamaForCausalLM'), 7);
    expect(maxAbsDiff(batchLogits(unscaled, ROWS), reference(join(dir, 'llama3_rope_scaling')))).toBeGreaterThan(1e-3);
    unscaled.dispose();
  });

  withTorch('qwen2 biases: the reference with biases disagrees with our model without them', async () => {
    const model = models.get('qwen2_bias')!;
    const path = join(dir, 'qwen2_bias');
    const tensors = await model.exportTensors();
    for (const [name, t] of tensors) if (name.endsWith('.bias')) t.data.fill(0);
    model.assignTensors(tensors);
    expect(maxAbsDiff(batchLogits(model, ROWS), reference(path))).toBeGreaterThan(1e-3);
    model.dispose();
  });
});

describe('checkpoint errors', () => {
  it('names a missing tensor and its expected shape', async () => {
    const model = randomModel(tinyConfigJson('Qwen3ForCausalLM'), 2);
    const tensors = await model.exportTensors();
    tensors.delete('model.layers.1.self_attn.k_norm.weight');
    const { DecoderModel } = await import('../src/model/DecoderModel.js');
    expect(() => DecoderModel.fromTensors(model.config, tensors)).toThrow(/model\.layers\.1\.self_attn\.k_norm\.weight.*\[12\]/);
    tensors.set('model.layers.1.self_attn.k_norm.weight', { shape: [8], data: new Float32Array(8) });
    expect(() => DecoderModel.fromTensors(model.config, tensors)).toThrow(/has shape \[8\], expected \[12\]/);
    model.dispose();
  });
});
