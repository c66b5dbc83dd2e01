import { afterAll, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { activationBytesPerToken, keyValueBytesPerToken, matrixWeightCount, readModelShape } from '../src/config/modelShape.js';
import { qwen25ConfigJson } from './modelFixtures.js';

const root = mkdtempSync(join(tmpdir(), 'drmas-model-shape-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

test('a built-in model: tiny has 2,048 positions and 4 layers of 2 key/value heads of 64', () => {
  const shape = readModelShape('tiny')!;
  expect(shape).toEqual({
    maxPositions: 2048,
    numLayers: 4,
    numHeads: 4,
    numKvHeads: 2,
    headDim: 64,
    hiddenSize: 256,
    intermediateSize: 704,
    vocabSize: 512,
    tiedEmbeddings: false,
    source: 'built-in tiny',
  });
  // keys and values x 4 layers x 2 heads x 64 x 4 bytes
  expect(keyValueBytesPerToken(shape)).toBe(4096);
  // (4 layers x (4 x 256 + 2 x 2 x 64 + 3 x 704) + 2 x 512) floats x 4 bytes
  expect(activationBytesPerToken(shape)).toBe(58_368);
  // A head in chunks of 100 columns: (4 x (4 x 256 + 2 x 2 x 64 + 3 x 704) + 2 x 100) x 4; a chunk wider than the
  // vocabulary counts the vocabulary.
  expect(activationBytesPerToken(shape, 100)).toBe(55_072);
  expect(activationBytesPerToken(shape, 16_384)).toBe(58_368);
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

test("the matrices' weights: Qwen2.5-0.5B's published count less its biases and norms", () => {
  const dir = join(root, 'qwen2.5-0.5b');
  mkdirSync(dir);
  writeFileSync(join(dir, 'config.json'), JSON.stringify(qwen25ConfigJson('0.5B')));
  // 494,032,768 parameters (the model card's 0.49B, summed over its safetensors) less q/k/v biases, 24 x (896 + 2 x 128),
  // and RMSNorm weights, 24 x 2 x 896 + 896.
  expect(matrixWeightCount(readModelShape(dir)!)).toBe(494_032_768 - 24 * (896 + 2 * 128) - (24 * 2 * 896 + 896));
  // tiny: 4 x (256 x 64 x 2 x (4 + 2) + 3 x 256 x 704) + 2 x 512 x 256, its output head untied.
  expect(matrixWeightCount(readModelShape('tiny')!)).toBe(4 * (256 * 64 * 2 * 6 + 3 * 256 * 704) + 2 * 512 * 256);
});

test('without a readable config.json there is no shape: loading the model reports the problem', () => {
  expect(readModelShape(join(root, 'missing'))).toBeUndefined();
  const broken = join(root, 'broken');
  mkdirSync(broken);
  writeFileSync(join(broken, 'config.json'), '{ not json');
  expect(readModelShape(broken)).toBeUndefined();
});
