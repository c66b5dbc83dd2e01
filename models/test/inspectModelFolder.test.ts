import { afterAll, expect, test } from '@jest/globals';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { saveCheckpoint } from '../src/checkpoint/checkpointDirectory.js';
import { parseModelConfig } from '../src/config/ModelConfig.js';
import { loadModelWeights, readModelFolder } from '../src/weights/loadModelWeights.js';
import { REAL_TOKENIZERS } from '../../test/support/realTokenizers.js';
import { inspectModelFolder } from '../src/weights/inspectModelFolder.js';
import { randomWeights, tinyConfigJson } from './modelFixtures.js';

const root = mkdtempSync(join(tmpdir(), 'drmas-inspect-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let folders = 0;

/** A model folder of `configJson` with random weights, optionally without some tensors and with more files. */
async function folder(
  configJson: Record<string, unknown>,
  options: { drop?: string[]; generationConfig?: object; maxShardSize?: number; weightsOf?: Record<string, unknown> } = {},
): Promise<string> {
  const dir = join(root, `m${folders++}`);
  const { weights } = randomWeights(options.weightsOf ?? configJson);
  for (const name of options.drop ?? []) weights.delete(name);
  await saveCheckpoint(dir, {
    config: configJson,
    tensors: weights,
    dtype: 'BF16',
    generationConfig: options.generationConfig,
    maxShardSize: options.maxShardSize,
  });
  return dir;
}

test("generation_config.json's eos ids join config.json's, so an Instruct model's turn end stops generation", async () => {
  // Qwen2.5-Instruct as published: config.json ends on <|im_end|> (here 40), generation_config.json on [40, 41]
  // (<|im_end|>, <|endoftext|>); Llama-3.2-Instruct lists three in both.
  const dir = await folder(tinyConfigJson('Qwen2ForCausalLM', { eos_token_id: 40 }), {
    generationConfig: { bos_token_id: 41, eos_token_id: [40, 41], pad_token_id: 41, temperature: 0.7 },
  });
  expect((await inspectModelFolder(dir)).config.eosTokenIds).toEqual([40, 41]);
  // What the engines load (their stop ids are config.eosTokenIds and the tokenizer's eos).
  expect((await readModelFolder(dir)).config.eosTokenIds).toEqual([40, 41]);
  const single = await folder(tinyConfigJson('LlamaForCausalLM', { eos_token_id: [3, 4] }), { generationConfig: { eos_token_id: 5 } });
  expect((await readModelFolder(single)).config.eosTokenIds).toEqual([3, 4, 5]);
});

test('an eos id of generation_config.json outside the vocabulary names the file and key', async () => {
  const dir = await folder(tinyConfigJson('Qwen3ForCausalLM'), { generationConfig: { eos_token_id: [7, 151645] } });
  await expect(inspectModelFolder(dir)).rejects.toMatchObject({
    code: 'CHECKPOINT_INVALID',
    file: join(dir, 'generation_config.json'),
    key: 'eos_token_id',
    message: expect.stringContaining('151645 is not a token id of a 48-token vocabulary'),
  });
});

test("a tokenizer with more ids than the model's vocabulary is refused at its file, before a sampled id leaves the embedding", async () => {
  // A 48-token model beside Qwen3's real tokenizer (151,669 ids), as a folder whose tokenizer files came from another model.
  const dir = await folder(tinyConfigJson('Qwen3ForCausalLM'));
  for (const file of ['tokenizer.json', 'tokenizer_config.json']) copyFileSync(join(REAL_TOKENIZERS.qwen3, file), join(dir, file));
  await expect(loadModelWeights({ model: dir })).rejects.toMatchObject({
    code: 'CHECKPOINT_INVALID',
    file: join(dir, 'tokenizer.json'),
    message: expect.stringContaining("the tokenizer has 151669 token ids but config.json's vocab_size is 48"),
  });
});

test('a config.json that unties the head of a tied checkpoint says which key to set, before any weight is read', async () => {
  // Saved tied (no lm_head.weight), with a config.json that says nothing: Llama's default is untied.
  const tied = tinyConfigJson('LlamaForCausalLM', { tie_word_embeddings: true });
  const { tie_word_embeddings: _, ...silent } = tied;
  const dir = await folder(silent, { weightsOf: tied });
  await expect(inspectModelFolder(dir)).rejects.toMatchObject({
    code: 'CHECKPOINT_INVALID',
    file: join(dir, 'config.json'),
    message: expect.stringContaining("tie_word_embeddings is false (LlamaForCausalLM's default), but the weights have no lm_head.weight"),
    hint: expect.stringContaining('"tie_word_embeddings": true'),
  });
});

test('sharded weights are checked from the shard headers: counted, dtypes read, a missing or mis-shaped tensor named', async () => {
  const configJson = tinyConfigJson('Qwen3ForCausalLM');
  const config = parseModelConfig(configJson);
  const dir = await folder(configJson, { maxShardSize: 4096 });
  const summary = await inspectModelFolder(dir);
  // Hand count: embed + head 48x32 each; per layer q 48x32, k/v 24x32, o 32x48, q/k norm 12, 2 norms 32, MLP 3x40x32.
  const perLayer = 48 * 32 + 2 * 24 * 32 + 32 * 48 + 2 * 12 + 2 * 32 + 3 * 40 * 32;
  expect(summary.parameters).toBe(2 * 48 * 32 + config.numLayers * perLayer + 32);
  expect(summary.dtypes).toEqual(['BF16']);
  expect(summary.files).toBeGreaterThan(2);

  const missing = await folder(configJson, { drop: ['model.layers.1.self_attn.k_norm.weight'] });
  await expect(inspectModelFolder(missing)).rejects.toMatchObject({
    message: 'checkpoint tensor "model.layers.1.self_attn.k_norm.weight" is missing (expected shape [12])',
  });
  const wider = await folder(configJson, { weightsOf: { ...configJson, intermediate_size: 44 } });
  await expect(inspectModelFolder(wider)).rejects.toMatchObject({
    message: 'checkpoint tensor "model.layers.0.mlp.gate_proj.weight" has shape [44, 32], expected [40, 32]',
  });
});

test("a transformers 5 config.json whose layer_types has sliding-window attention is refused at the layer's key", async () => {
  const dir = await folder(tinyConfigJson('Qwen2ForCausalLM'));
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify(tinyConfigJson('Qwen2ForCausalLM', { layer_types: ['full_attention', 'sliding_attention'] })),
  );
  await expect(inspectModelFolder(dir)).rejects.toMatchObject({
    key: 'layer_types[1]',
    message: 'layer 1 has "sliding_attention"; only "full_attention" is implemented',
  });
});
