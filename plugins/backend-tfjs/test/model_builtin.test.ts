import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { selectRuntime } from '../src/runtime/RuntimeSelector.js';
import { BUILTIN_MODELS, createBuiltinModel } from '../src/builtin/builtinModels.js';
import { loadDecoderModel, saveDecoderModel } from '../src/model/modelCheckpoint.js';
import { Tokenizer } from '../src/tokenizer/index.js';
import { batchLogits, maxAbsDiff } from './modelFixtures.js';

beforeAll(async () => {
  await selectRuntime('wasm');
});

describe('built-in models', () => {
  it('tiny has ~3M parameters, a 512-token tokenizer, and is deterministic for a seed', async () => {
    const a = createBuiltinModel('tiny', { seed: 1 });
    const b = createBuiltinModel('tiny', { seed: 1 });
    const c = createBuiltinModel('tiny', { seed: 2 });
    expect(a.model.parameterCount).toBeGreaterThan(2.9e6);
    expect(a.model.parameterCount).toBeLessThan(3.4e6);
    expect(a.tokenizer.vocabSize).toBe(BUILTIN_MODELS.tiny.vocab_size);
    const ids = a.tokenizer.encode('Natalia sold 48 clips. 48 + 24 = 72');
    expect(a.tokenizer.decode(ids)).toBe('Natalia sold 48 clips. 48 + 24 = 72');
    const ta = await a.model.exportTensors();
    const tb = await b.model.exportTensors();
    expect([...tb.keys()]).toEqual([...ta.keys()]);
    for (const [name, t] of ta) expect(Buffer.from(tb.get(name)!.data.buffer).equals(Buffer.from(t.data.buffer))).toBe(true);
    const wa = (await a.model.exportTensors()).get('model.layers.0.mlp.up_proj.weight')!.data;
    const wc = (await c.model.exportTensors()).get('model.layers.0.mlp.up_proj.weight')!.data;
    expect(Buffer.from(wa.buffer).equals(Buffer.from(wc.buffer))).toBe(false);
    // HF init: std 0.02 for linear weights.
    const std = Math.sqrt(wa.reduce((s, x) => s + x * x, 0) / wa.length);
    expect(std).toBeCloseTo(0.02, 3);
    for (const m of [a, b, c]) m.model.dispose();
  });

  it('saves as a standard checkpoint (config.json, model.safetensors, tokenizer.json) and reloads to identical logits', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drmas-builtin-'));
    const { model, tokenizer } = createBuiltinModel('tiny', { seed: 3, architecture: 'Qwen3ForCausalLM' });
    await saveDecoderModel(dir, model, { tokenizer });
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    expect(config).toMatchObject({ architectures: ['Qwen3ForCausalLM'], model_type: 'qwen3', torch_dtype: 'float32' });
    const loaded = await loadDecoderModel(dir);
    expect(loaded.tokenizerDir).toBe(dir);
    const reTokenizer = await Tokenizer.fromDirectory(dir);
    expect(reTokenizer!.encode('How many clips?')).toEqual(tokenizer.encode('How many clips?'));
    const rows = [tokenizer.encode('How many clips did she sell?'), tokenizer.encode('12 + 7 =')];
    expect(maxAbsDiff(batchLogits(loaded.model, rows), batchLogits(model, rows))).toBe(0);
    model.dispose();
    loaded.model.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
});
