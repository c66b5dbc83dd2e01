import { mkdtempSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtinModel, Tokenizer } from '@drmas/models';
import { selectRuntime } from '../src/runtime/RuntimeSelector.js';
import { DecoderModel } from '../src/model/DecoderModel.js';
import { loadDecoderModel, saveDecoderModel } from '../src/model/modelCheckpoint.js';
import { batchLogits, maxAbsDiff } from './modelFixtures.js';

beforeAll(async () => {
  await selectRuntime('wasm');
});

describe('built-in models', () => {
  it('tiny has ~3M parameters on tfjs and holds the built-in weights bit for bit', async () => {
    const { config, weights } = builtinModel('tiny', { seed: 1 });
    const model = DecoderModel.fromTensors(config, weights);
    expect(model.parameterCount).toBeGreaterThan(2.9e6);
    expect(model.parameterCount).toBeLessThan(3.4e6);
    const exported = await model.exportTensors();
    expect([...exported.keys()]).toEqual([...weights.keys()]);
    for (const [name, t] of exported) expect(Buffer.from(t.data.buffer).equals(Buffer.from(weights.get(name)!.data.buffer))).toBe(true);
    model.dispose();
  });

  it('saves as a standard checkpoint (config.json, model.safetensors, tokenizer.json) and reloads to identical logits', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drmas-builtin-'));
    const { config: decoderConfig, weights, tokenizer } = builtinModel('tiny', { seed: 3, architecture: 'Qwen3ForCausalLM' });
    const model = DecoderModel.fromTensors(decoderConfig, weights);
    await saveDecoderModel(dir, model, { tokenizer });
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
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
