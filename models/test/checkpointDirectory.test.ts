import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectTensor, isTemporaryCheckpointName, loadCheckpoint, saveCheckpoint } from '../src/checkpoint/checkpointDirectory.js';
import { CheckpointReader } from '../src/checkpoint/CheckpointReader.js';
import { TensorShapeError } from '../src/checkpoint/errors.js';
import type { TensorInput } from '../src/checkpoint/safetensors.js';
import { buildCharacterTokenizer } from '../src/tokenizer/buildCharacterTokenizer.js';
import { Tokenizer } from '../src/tokenizer/Tokenizer.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'drmas-checkpoint-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const config = { model_type: 'qwen2', hidden_size: 4, vocab_size: 8 };
function tensors(scale = 1): Map<string, TensorInput> {
  return new Map([
    ['model.embed_tokens.weight', { shape: [8, 4], data: Float32Array.from({ length: 32 }, (_, i) => i * scale) }],
    ['model.norm.weight', { shape: [4], data: Float32Array.of(1, 1, 1, 1) }],
  ]);
}

test('save then load: config, tensors, generation config, tokenizer, extra files', async () => {
  const dir = join(root, 'ckpt');
  const tokenizer = buildCharacterTokenizer('abc');
  await saveCheckpoint(dir, {
    config,
    tensors: tensors(),
    generationConfig: { eos_token_id: 3 },
    tokenizer,
    extraFiles: { 'trainer_state.json': '{"step":7}', 'nested/notes.txt': 'hi' },
  });
  expect((await readdir(dir)).sort()).toEqual(
    [
      'config.json',
      'generation_config.json',
      'model.safetensors',
      'nested',
      'tokenizer.json',
      'tokenizer_config.json',
      'trainer_state.json',
    ].sort(),
  );
  const loaded = await loadCheckpoint(dir);
  expect(loaded.config).toEqual(config);
  expect(loaded.generationConfig).toEqual({ eos_token_id: 3 });
  expect(loaded.tokenizerDir).toBe(dir);
  expect(loaded.tensors.get('model.embed_tokens.weight')).toEqual({
    dtype: 'F32',
    shape: [8, 4],
    data: Float32Array.from({ length: 32 }, (_, i) => i),
  });
  const reloadedTokenizer = await Tokenizer.fromDirectory(loaded.tokenizerDir!);
  expect(reloadedTokenizer!.encode('cab')).toEqual(tokenizer.encode('cab'));
  expect(await readFile(join(dir, 'nested/notes.txt'), 'utf8')).toBe('hi');
});

test('sharded BF16 checkpoint round trip', async () => {
  const dir = join(root, 'sharded');
  await saveCheckpoint(dir, { config, tensors: tensors(), dtype: 'BF16', maxShardSize: 64 });
  expect((await readdir(dir)).filter((f) => f.includes('safetensors')).sort()).toEqual([
    'model-00001-of-00002.safetensors',
    'model-00002-of-00002.safetensors',
    'model.safetensors.index.json',
  ]);
  const loaded = await loadCheckpoint(dir);
  expect(loaded.tensors.get('model.embed_tokens.weight')!.dtype).toBe('BF16');
  // Integers up to 256 are exact in bfloat16.
  expect(loaded.tensors.get('model.embed_tokens.weight')!.data).toEqual(Float32Array.from({ length: 32 }, (_, i) => i));
  expect(loaded.tokenizerDir).toBeUndefined();
});

test('saving over an existing checkpoint replaces it', async () => {
  const dir = join(root, 'ckpt');
  await saveCheckpoint(dir, { config, tensors: tensors(1), extraFiles: { 'old.txt': 'x' } });
  await saveCheckpoint(dir, { config, tensors: tensors(2) });
  const loaded = await loadCheckpoint(dir);
  expect(loaded.tensors.get('model.embed_tokens.weight')!.data[1]).toBe(2);
  expect(await readdir(dir)).not.toContain('old.txt');
  expect(await readdir(root)).toEqual(['ckpt']);
});

test('a crash during save leaves the previous checkpoint intact and no temporary folder', async () => {
  const dir = join(root, 'ckpt');
  await saveCheckpoint(dir, { config, tensors: tensors(1) });
  const crashing = { save: async () => Promise.reject(new Error('disk full')) };
  await expect(saveCheckpoint(dir, { config, tensors: tensors(2), tokenizer: crashing })).rejects.toThrow('disk full');
  expect(await readdir(root)).toEqual(['ckpt']);
  expect((await loadCheckpoint(dir)).tensors.get('model.embed_tokens.weight')!.data[1]).toBe(1);
});

test('a temporary folder left by a killed process is never loaded, and the next save removes it', async () => {
  // What a process killed mid-save leaves: a hidden sibling with a half-written checkpoint, no target folder.
  const dead = join(root, '.ckpt.tmp-999999999-0badf00d');
  await mkdir(dead);
  await writeFile(join(dead, 'config.json'), JSON.stringify(config));
  await writeFile(join(dead, 'model.safetensors'), new Uint8Array([1, 2, 3]));
  expect(isTemporaryCheckpointName('.ckpt.tmp-999999999-0badf00d')).toBe(true);
  expect(isTemporaryCheckpointName('ckpt')).toBe(false);

  await expect(loadCheckpoint(join(root, 'ckpt'))).rejects.toMatchObject({
    file: join(root, 'ckpt'),
    message: 'checkpoint folder does not exist',
  });
  await expect(loadCheckpoint(dead)).rejects.toThrow(/temporary folder of an unfinished checkpoint save/);

  await saveCheckpoint(join(root, 'ckpt'), { config, tensors: tensors(3) });
  expect(await readdir(root)).toEqual(['ckpt']);
  expect((await loadCheckpoint(join(root, 'ckpt'))).tensors.get('model.embed_tokens.weight')!.data[1]).toBe(3);
});

test('an existing folder that is not a checkpoint is never replaced', async () => {
  const dir = join(root, 'logs');
  await mkdir(dir);
  await writeFile(join(dir, 'important.txt'), 'keep me');
  await expect(saveCheckpoint(dir, { config, tensors: tensors() })).rejects.toMatchObject({
    file: dir,
    message: expect.stringMatching(/^exists and is not a checkpoint folder/),
  });
  expect(await readdir(dir)).toEqual(['important.txt']);
  expect(await readdir(root)).toEqual(['logs']);
});

test.each([
  ['single file', undefined],
  ['shards', 64],
])('CheckpointReader reads tensor by tensor (%s)', async (_, maxShardSize) => {
  const dir = join(root, 'ckpt');
  await saveCheckpoint(dir, { config, tensors: tensors(), maxShardSize });
  const reader = await CheckpointReader.open(dir);
  try {
    expect(reader.names.sort()).toEqual(['model.embed_tokens.weight', 'model.norm.weight']);
    expect(reader.entry('model.embed_tokens.weight')).toMatchObject({ dtype: 'F32', shape: [8, 4] });
    expect((await reader.read('model.norm.weight')).data).toEqual(Float32Array.of(1, 1, 1, 1));
    await expect(reader.read('nope')).rejects.toMatchObject({ file: dir, message: 'the checkpoint has no tensor "nope"' });
  } finally {
    await reader.close();
  }
});

test('a folder without weights or config is a clear error', async () => {
  const dir = join(root, 'empty');
  await mkdir(dir);
  await expect(loadCheckpoint(dir)).rejects.toMatchObject({ file: dir, message: expect.stringMatching(/^no config\.json/) });
  await writeFile(join(dir, 'config.json'), '{}');
  await writeFile(join(dir, 'pytorch_model.bin'), '');
  await expect(loadCheckpoint(dir)).rejects.toThrow(/no model\.safetensors.*pytorch_model\.bin is not supported/);
});

test('a LoRA checkpoint (no tensors, the adapter as extra files) writes no weights file, and opening it as a model says what it is', async () => {
  const dir = join(root, 'lora');
  await saveCheckpoint(dir, { config, tensors: new Map(), extraFiles: { 'adapter_config.json': '{}', 'adapter_model.safetensors': '' } });
  expect((await readdir(dir)).sort()).toEqual(['adapter_config.json', 'adapter_model.safetensors', 'config.json']);
  for (const open of [() => CheckpointReader.open(dir), () => loadCheckpoint(dir)])
    await expect(open()).rejects.toMatchObject({
      file: dir,
      message: 'is a LoRA adapter folder (adapter_config.json) without base weights',
      hint: expect.stringMatching(/drmas export --merge-lora/),
    });
});

test('extra file names cannot escape the checkpoint folder', async () => {
  await expect(saveCheckpoint(join(root, 'c'), { config, tensors: tensors(), extraFiles: { '../evil.txt': 'x' } })).rejects.toThrow(
    /"\.\.\/evil\.txt" points outside/,
  );
  expect(await readdir(root)).toEqual([]);
});

describe('expectTensor', () => {
  const loaded = new Map([['w', { dtype: 'F32' as const, shape: [2, 3], data: new Float32Array(6) }]]);

  test('returns the tensor when the shape matches', () => {
    expect(expectTensor(loaded, 'w', [2, 3]).shape).toEqual([2, 3]);
  });

  test('wrong shape names the tensor, the expected and the found shape', () => {
    expect(() => expectTensor(loaded, 'w', [3, 2])).toThrow(TensorShapeError);
    expect(() => expectTensor(loaded, 'w', [3, 2])).toThrow('checkpoint tensor "w" has shape [2, 3], expected [3, 2]');
  });

  test('missing tensor says so', () => {
    expect(() => expectTensor(loaded, 'lm_head.weight', [8, 4])).toThrow(
      'checkpoint tensor "lm_head.weight" is missing (expected shape [8, 4])',
    );
  });
});
