import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BUILTIN_MODELS,
  builtinModel,
  configJsonFor,
  loadModelWeights,
  readModelFolder,
  saveCheckpoint,
  type ArchitectureName,
  type HostTensor,
} from '../src/index.js';

const bytes = (t: HostTensor) => Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);

function sameBits(a: Map<string, HostTensor>, b: Map<string, HostTensor>): boolean {
  if ([...a.keys()].sort().join() !== [...b.keys()].sort().join()) return false;
  return [...a].every(([name, t]) => bytes(t).equals(bytes(b.get(name)!)));
}

function weightsHash(weights: Map<string, HostTensor>): string {
  const hash = createHash('sha256');
  for (const [name, t] of weights) {
    hash.update(name);
    hash.update(JSON.stringify(t.shape));
    hash.update(bytes(t));
  }
  return hash.digest('hex');
}

describe('built-in models', () => {
  it('tiny has ~3M parameters, a 512-token tokenizer, and is deterministic for a seed', () => {
    const a = builtinModel('tiny', { seed: 1 });
    const b = builtinModel('tiny', { seed: 1 });
    const c = builtinModel('tiny', { seed: 2 });
    const parameters = [...a.weights.values()].reduce((n, t) => n + t.data.length, 0);
    expect(parameters).toBeGreaterThan(2.9e6);
    expect(parameters).toBeLessThan(3.4e6);
    expect(a.tokenizer.vocabSize).toBe(BUILTIN_MODELS.tiny.vocab_size);
    const ids = a.tokenizer.encode('Natalia sold 48 clips. 48 + 24 = 72');
    expect(a.tokenizer.decode(ids)).toBe('Natalia sold 48 clips. 48 + 24 = 72');
    expect(sameBits(a.weights, b.weights)).toBe(true);
    const wa = a.weights.get('model.layers.0.mlp.up_proj.weight')!.data;
    const wc = c.weights.get('model.layers.0.mlp.up_proj.weight')!.data;
    expect(wa.every((x, i) => x === wc[i])).toBe(false);
    // HF init: std 0.02 for linear weights, norms 1.
    const std = Math.sqrt(wa.reduce((s, x) => s + x * x, 0) / wa.length);
    expect(std).toBeCloseTo(0.02, 3);
    expect(a.weights.get('model.norm.weight')!.data.every((x) => x === 1)).toBe(true);
  });

  // The weights the tfjs backend drew (DecoderModel.randomInit) before the model I/O moved here: a seed must keep
  // giving the same bits (saved runs, presets and the engines' parity rely on it).
  it.each<[number, ArchitectureName, string]>([
    [0, 'Qwen2ForCausalLM', 'a54bd15e913999cb04bcd90ffa7f53363c620f898a88d32c6af4eb8fadca967a'],
    [5, 'Qwen3ForCausalLM', 'd5b690384560932ecc7c009372af6cb0905e46e4be4bbdc598cd40e576dd6950'],
    [1, 'LlamaForCausalLM', 'c9969c0e8c6c3089e72c547b2349a9171c161ab4d2d25e94e7deaabb3a2f49eb'],
  ])('tiny, seed %i, %s: the same bits as ever', (seed, architecture, expected) => {
    expect(weightsHash(builtinModel('tiny', { seed, architecture }).weights)).toBe(expected);
  });
});

describe('loadModelWeights', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'drmas-model-weights-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('gives a built-in model by name, and a checkpoint folder with only the decoder tensors and its tokenizer', async () => {
    const builtin = await loadModelWeights({ model: 'tiny', seed: 4, architecture: 'LlamaForCausalLM' });
    expect(builtin.config.architecture).toBe('LlamaForCausalLM');
    expect(sameBits(builtin.weights, builtinModel('tiny', { seed: 4, architecture: 'LlamaForCausalLM' }).weights)).toBe(true);

    const tensors = new Map([...builtin.weights, ['extra.weight', { shape: [2], data: new Float32Array([1, 2]) }]]);
    await saveCheckpoint(dir, { config: configJsonFor(builtin.config), tensors, tokenizer: builtin.tokenizer });
    const loaded = await loadModelWeights({ model: dir, seed: 99 });
    expect(loaded.config).toEqual(builtin.config);
    expect(sameBits(loaded.weights, builtin.weights)).toBe(true);
    expect(loaded.tokenizer!.encode('12 + 7 = 19')).toEqual(builtin.tokenizer!.encode('12 + 7 = 19'));

    const folder = await readModelFolder(dir);
    expect(folder.tokenizerDir).toBe(dir);
    expect(folder.weights.has('extra.weight')).toBe(false);
  });
});
