import type { LoraSettings } from '@drmas/core';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { initLoraAdapter, loadLoraAdapter, loraAdapterFiles, mergeLoraAdapter, readSafetensorsHeader, SeededRandom } from '../src/index.js';
import { randomWeights, tinyConfigJson } from './modelFixtures.js';

/**
 * The PEFT layout of a LoRA adapter: the tensor names and shapes `get_peft_model_state_dict` gives for a Qwen2
 * `PeftModelForCausalLM` (huggingface/peft src/peft/utils/save_and_load.py: the adapter name is dropped,
 * `base_model.model.` kept; src/peft/tuners/lora/layer.py: lora_A is nn.Linear(in, r), lora_B nn.Linear(r, out)),
 * written out by hand here, the adapter_config.json keys LoraConfig reads, and the round trip.
 */

const SETTINGS: LoraSettings = { rank: 4, alpha: 16, dropout: 0.05, targetModules: ['q_proj', 'v_proj', 'down_proj'] };

// tiny config: hidden 32, 4 heads of 8, 2 KV heads, intermediate 40, 2 layers.
const EXPECTED: Record<string, number[]> = {};
for (const layer of [0, 1]) {
  const p = `base_model.model.model.layers.${layer}`;
  Object.assign(EXPECTED, {
    [`${p}.self_attn.q_proj.lora_A.weight`]: [4, 32],
    [`${p}.self_attn.q_proj.lora_B.weight`]: [32, 4],
    [`${p}.self_attn.v_proj.lora_A.weight`]: [4, 32],
    [`${p}.self_attn.v_proj.lora_B.weight`]: [16, 4],
    [`${p}.mlp.down_proj.lora_A.weight`]: [4, 40],
    [`${p}.mlp.down_proj.lora_B.weight`]: [32, 4],
  });
}

describe('LoRA adapters in the PEFT layout', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'drmas-peft-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('writes PEFT names, shapes and adapter_config.json, and reads them back', async () => {
    const { config } = randomWeights(tinyConfigJson('Qwen2ForCausalLM'));
    const adapter = initLoraAdapter(config, SETTINGS, new SeededRandom(2));
    // PEFT's init: A uniform in +-1/sqrt(in_features), B zeros.
    for (const [name, t] of adapter) {
      if (name.endsWith('lora_B.weight')) expect(t.data.every((v) => v === 0)).toBe(true);
      else expect(Math.max(...t.data.map(Math.abs))).toBeLessThanOrEqual(1 / Math.sqrt(t.shape[1]!));
    }
    for (const t of adapter.values()) for (let i = 0; i < t.data.length; i++) t.data[i] = Math.sin(i + t.data.length);
    const files = loraAdapterFiles('adapters/solver', SETTINGS, adapter, 'Qwen/Qwen2.5-0.5B-Instruct');
    for (const [name, data] of Object.entries(files)) {
      await mkdir(dirname(join(dir, name)), { recursive: true });
      await writeFile(join(dir, name), data);
    }
    const folder = join(dir, 'adapters/solver');
    const header = await readSafetensorsHeader(join(folder, 'adapter_model.safetensors'));
    const stored = Object.fromEntries([...header.tensors].map(([name, e]) => [name, e.shape]));
    expect(stored).toEqual(EXPECTED);
    const json = JSON.parse(await readFile(join(folder, 'adapter_config.json'), 'utf8')) as Record<string, unknown>;
    expect(json).toMatchObject({
      peft_type: 'LORA',
      task_type: 'CAUSAL_LM',
      base_model_name_or_path: 'Qwen/Qwen2.5-0.5B-Instruct',
      r: 4,
      lora_alpha: 16,
      lora_dropout: 0.05,
      target_modules: ['q_proj', 'v_proj', 'down_proj'],
      bias: 'none',
    });
    const loaded = await loadLoraAdapter(folder, config);
    expect(loaded.settings).toEqual(SETTINGS);
    for (const [name, t] of adapter) expect(Array.from(loaded.tensors.get(name)!.data)).toEqual(Array.from(t.data));
  });

  it('refuses an adapter whose tensors do not fit the model, naming the tensor', async () => {
    const { config } = randomWeights(tinyConfigJson('Qwen2ForCausalLM'));
    const wide = randomWeights(tinyConfigJson('Qwen2ForCausalLM', { intermediate_size: 48 })).config;
    const files = loraAdapterFiles('wide', SETTINGS, initLoraAdapter(wide, SETTINGS, new SeededRandom(1)));
    for (const [name, data] of Object.entries(files)) {
      await mkdir(dirname(join(dir, name)), { recursive: true });
      await writeFile(join(dir, name), data);
    }
    await expect(loadLoraAdapter(join(dir, 'wide'), config)).rejects.toMatchObject({
      code: 'CHECKPOINT_INVALID',
      message: expect.stringContaining('base_model.model.model.layers.0.mlp.down_proj.lora_A.weight'),
    });
  });

  it('merges W + (alpha / r) B A into each targeted module and leaves the rest as it was', () => {
    const { config, weights } = randomWeights(tinyConfigJson('Qwen2ForCausalLM'));
    const adapter = initLoraAdapter(config, SETTINGS, new SeededRandom(3));
    // Hand-worked: only A's row 0 is nonzero, A[0][i] = i + 1, and B's column 0 is B[o][0] = o (its other columns are
    // noise that the zero rows of A must cancel), so B A [o][i] = o (i + 1) and with alpha / r = 16 / 4 the merged
    // weight is W[o][i] + 4 o (i + 1).
    for (const [name, t] of adapter) {
      const [rows, cols] = t.shape as [number, number];
      for (let r = 0; r < rows; r++)
        for (let c = 0; c < cols; c++)
          t.data[r * cols + c] = name.endsWith('lora_A.weight') ? (r === 0 ? c + 1 : 0) : c === 0 ? r : Math.sin(r * 7 + c);
    }
    const merged = mergeLoraAdapter(config, weights, { settings: SETTINGS, tensors: adapter });
    for (const name of ['model.layers.1.self_attn.v_proj.weight', 'model.layers.0.mlp.down_proj.weight']) {
      const [rows, cols] = weights.get(name)!.shape as [number, number];
      const expected = Float32Array.from(
        { length: rows * cols },
        (_, k) => weights.get(name)!.data[k]! + 4 * Math.floor(k / cols) * ((k % cols) + 1),
      );
      expect(merged.get(name)!.shape).toEqual([rows, cols]);
      expect(Array.from(merged.get(name)!.data)).toEqual(Array.from(expected));
    }
    expect([...merged.keys()].sort()).toEqual([...weights.keys()].sort());
    for (const name of ['model.layers.0.self_attn.k_proj.weight', 'model.layers.0.mlp.up_proj.weight', 'model.norm.weight'])
      expect(merged.get(name)).toBe(weights.get(name));
  });
});
