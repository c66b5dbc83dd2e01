import { afterAll, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { activationBytesPerToken, keyValueBytesPerToken, readModelShape } from '../src/config/modelShape.js';

const root = mkdtempSync(join(tmpdir(), 'drmas-model-shape-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

test('a built-in model: tiny has 2,048 positions and 4 layers of 2 key/value heads of 64', () => {
  const shape = readModelShape('tiny')!;
  expect(shape).toEqual({
    maxPositions: 2048,
    numLayers: 4,
    numKvHeads: 2,
    headDim: 64,
    hiddenSize: 256,
    intermediateSize: 704,
    vocabSize: 512,
    source: 'built-in tiny',
  });
  // keys and values x 4 layers x 2 heads x 64 x 4 bytes
  expect(keyValueBytesPerToken(shape)).toBe(4096);
  // (4 layers x (4 x 256 + 2 x 2 x 64 + 3 x 704) + 2 x 512) floats x 4 bytes
  expect(activationBytesPerToken(shape)).toBe(58_368);
});

test('a checkpoint folder is read from its config.json alone, head_dim derived as transformers does', () => {
  const dir = join(root, 'llama');
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify({
      architectures: ['LlamaForCausalLM'],
      hidden_size: 2048,
      intermediate_size: 8192,
      num_hidden_layers: 16,
      num_attention_heads: 32,
      num_key_value_heads: 8,
      vocab_size: 128256,
      max_position_embeddings: 131072,
    }),
  );
  const shape = readModelShape(dir)!;
  expect(shape).toMatchObject({ maxPositions: 131072, numLayers: 16, numKvHeads: 8, headDim: 64, source: join(dir, 'config.json') });
  expect(shape).toMatchObject({ hiddenSize: 2048, intermediateSize: 8192, vocabSize: 128256 });
  expect(keyValueBytesPerToken(shape)).toBe(2 * 16 * 8 * 64 * 4);
});

test('without a readable config.json there is no shape: loading the model reports the problem', () => {
  expect(readModelShape(join(root, 'missing'))).toBeUndefined();
  const broken = join(root, 'broken');
  mkdirSync(broken);
  writeFileSync(join(broken, 'config.json'), '{ not json');
  expect(readModelShape(broken)).toBeUndefined();
});
