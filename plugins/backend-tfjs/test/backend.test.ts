import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { createTfjsPolicyBackend, type TfjsPolicyBackend } from '../src/TfjsPolicyBackend.js';
import { tfjsBackendFactory } from '../src/plugin/TfjsBackendPlugin.js';
import { generateCommand, scoreCommand } from '@drmas/models';
import { scoreSequences } from '@drmas/core';
import { makeBatch, updateRequest, weightedCrossEntropy } from './trainingFixtures.js';
import { batchLogits, maxAbsDiff } from './modelFixtures.js';
import { qwen25ConfigJson } from '../../../models/test/modelFixtures.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'drmas-backend-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PAIRS: [number[], number[]][] = [
  [
    [3, 7, 1, 9],
    [12, 5, 20, 2],
  ],
  [[8], [30, 4, 11]],
];

function same(a: Map<string, { data: Float32Array }>, b: Map<string, { data: Float32Array }>): boolean {
  for (const [name, t] of a) if (!Buffer.from(t.data.buffer).equals(Buffer.from(b.get(name)!.data.buffer))) return false;
  return true;
}

describe('TfjsPolicyBackend', () => {
  let a: TfjsPolicyBackend;
  let b: TfjsPolicyBackend;
  beforeAll(async () => {
    a = await createTfjsPolicyBackend({ model: 'tiny', seed: 1, runtime: 'wasm' });
    b = await createTfjsPolicyBackend({ model: 'tiny', seed: 1, runtime: 'wasm' });
  });
  afterAll(() => {
    a.dispose();
    b.dispose();
  });

  it('reports its runtime', () => {
    expect(a.runtime).toMatch(/^wasm \(simd/);
  });

  it('instances are independent: updating one leaves the other unchanged; syncWeights copies', async () => {
    const before = await b.exportWeights();
    const result = await a.update(updateRequest(makeBatch(PAIRS), weightedCrossEntropy, 1, { optimizer: { lr: 1e-3 } }));
    expect(result.skipped).toBe(false);
    expect(result.gradNorm).toBeGreaterThan(0);
    expect(same(await b.exportWeights(), before)).toBe(true);
    expect(same(await a.exportWeights(), before)).toBe(false);
    await b.syncWeights(a);
    expect(same(await b.exportWeights(), await a.exportWeights())).toBe(true);
    await b.syncWeights(b);
  });

  it("refuses 8-bit moments at the model's optimizer key, its weights untouched", async () => {
    const policy = await createTfjsPolicyBackend({ name: 'tfjs:policy', model: 'tiny', seed: 1, runtime: 'wasm' });
    const before = await policy.exportWeights();
    const request = updateRequest(makeBatch(PAIRS), weightedCrossEntropy, 1, { optimizer: { lr: 1e-3, moments: '8bit' } });
    await expect(policy.update(request)).rejects.toMatchObject({ code: 'CONFIG_INVALID', key: 'models.policy.optimizer.moments' });
    expect(same(await policy.exportWeights(), before)).toBe(true);
    policy.dispose();
  });

  it('saves and loads weights, tokenizer and optimizer state; the next update matches', async () => {
    const path = join(dir, 'ckpt');
    await a.save(path);
    expect(readdirSync(path).sort()).toEqual(
      expect.arrayContaining(['config.json', 'model.safetensors', 'optimizer.json', 'optimizer.safetensors', 'tokenizer.json']),
    );
    await b.load(path);
    expect(b.trainer.optimizer.step).toBe(1);
    const batch = makeBatch(PAIRS, [1, -1]);
    const ra = await a.update(updateRequest(batch, weightedCrossEntropy, 2, { optimizer: { lr: 1e-3 } }));
    const rb = await b.update(updateRequest(batch, weightedCrossEntropy, 2, { optimizer: { lr: 1e-3 } }));
    expect(rb.loss).toBe(ra.loss);
    expect(same(await b.exportWeights(), await a.exportWeights())).toBe(true);
  });

  it('generates with stop strings through its tokenizer, and default eos stop ids', async () => {
    const tok = a.tokenizer!;
    const prompt = tok.encode('Natalia sold 48 clips');
    const free = await a.generate({ prompts: [prompt], maxNewTokens: 12, seed: 4, stopTokenIds: [] });
    const text = tok.decode(free.tokenIds[0]!);
    const stop = text.slice(2, 4);
    if (stop.length === 2) {
      const stopped = await a.generate({ prompts: [prompt], maxNewTokens: 12, seed: 4, stopStrings: [stop], stopTokenIds: [] });
      expect(tok.decode(stopped.tokenIds[0]!)).toContain(stop);
      expect(stopped.finishReasons[0]).toBe('stop');
    }
    expect(a.defaultStopTokenIds).toContain(tok.eosTokenId);
  });
});

describe('a checkpoint with only config.json and model.safetensors', () => {
  let path: string;
  beforeAll(async () => {
    const source = await createTfjsPolicyBackend({ model: 'tiny', seed: 5, runtime: 'wasm', architecture: 'LlamaForCausalLM' });
    path = join(dir, 'bare');
    await source.save(path, { optimizer: false });
    for (const f of readdirSync(path)) if (f !== 'config.json' && f !== 'model.safetensors') unlinkSync(join(path, f));
    source.dispose();
  });

  it('loads for token-id work: generate, score, and identical logits to the saved model', async () => {
    const backend = await createTfjsPolicyBackend({ model: path, runtime: 'wasm' });
    expect(backend.tokenizer).toBeUndefined();
    const out = await backend.generate({ prompts: [[1, 2, 3], [4]], maxNewTokens: 4, temperature: 0 });
    const scored = await scoreSequences(backend, [[1, 2, 3], [4]], out.tokenIds);
    scored.logProbs.forEach((row, r) => row.forEach((lp, j) => expect(Math.abs(lp - out.logProbs[r]![j]!)).toBeLessThan(1e-4)));
    const fresh = await createTfjsPolicyBackend({ model: 'tiny', seed: 5, runtime: 'wasm', architecture: 'LlamaForCausalLM' });
    expect(maxAbsDiff(batchLogits(backend.model, [[1, 2, 3]]), batchLogits(fresh.model, [[1, 2, 3]]))).toBe(0);
    fresh.dispose();
    backend.dispose();
  });

  it('CLI score prints {"logprobs": [null, ...]} matching the backend', async () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk) => (text += chunk));
    const result = await scoreCommand({ model: path, ids: [5, 9, 2, 7], json: true, runtime: 'wasm', engine: 'tfjs' }, out);
    const printed = JSON.parse(text) as { logprobs: (number | null)[] };
    expect(printed.logprobs).toHaveLength(4);
    expect(printed.logprobs[0]).toBeNull();
    expect(printed.logprobs).toEqual(result);
    const backend = await createTfjsPolicyBackend({ model: path, runtime: 'wasm' });
    const { logProbs } = await scoreSequences(backend, [[5]], [[9, 2, 7]]);
    expect(printed.logprobs.slice(1)).toEqual(logProbs[0]);
    backend.dispose();
  });

  it('CLI generate streams token ids when there is no tokenizer, text with one', async () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk) => (text += chunk));
    const ids = await generateCommand({ model: path, promptIds: [1, 2], maxNewTokens: 5, seed: 1, runtime: 'wasm', engine: 'tfjs' }, out);
    expect(text.trim()).toBe(ids.join(' '));
    const out2 = new PassThrough();
    let text2 = '';
    out2.on('data', (chunk) => (text2 += chunk));
    await generateCommand({ model: 'tiny', prompt: 'How many clips', maxNewTokens: 6, seed: 2, runtime: 'wasm', engine: 'tfjs' }, out2);
    expect(text2.endsWith('\n')).toBe(true);
    await expect(generateCommand({ model: path, prompt: 'hi', runtime: 'wasm', engine: 'tfjs' }, new PassThrough())).rejects.toThrow(
      /no tokenizer/,
    );
  });
});

describe('the tfjs backend factory', () => {
  const create = (settings: Record<string, unknown>) =>
    tfjsBackendFactory.create({ modelId: 'policy', settings: { seed: 0, ...settings }, run: { log: () => {} } as never });

  it('reports a model that fails to load at models.<id>.model and an unknown runtime at models.<id>.runtime, keeping their codes', async () => {
    await expect(create({ model: join(dir, 'absent'), runtime: 'wasm' })).rejects.toMatchObject({
      code: 'CHECKPOINT_INVALID',
      key: 'models.policy.model',
      message: `model policy failed to load: ${join(dir, 'absent')}: checkpoint folder does not exist`,
      hint: expect.stringMatching(/^give tiny, small or a Hugging Face checkpoint folder/),
    });
    await expect(create({ model: 'tiny', runtime: 'tpu' })).rejects.toMatchObject({
      code: 'RUNTIME_UNAVAILABLE',
      key: 'models.policy.runtime',
      message: expect.stringMatching(/^model policy \(tiny\) failed to load: no tfjs runtime available for 'tpu'/),
    });
  });

  it("refuses on wasm a model whose float32 weights alone outgrow the heap (Qwen2.5-1.5B's configuration), from its config.json", () => {
    const qwen = join(dir, 'qwen2.5-1.5b');
    mkdirSync(qwen);
    writeFileSync(join(qwen, 'config.json'), JSON.stringify(qwen25ConfigJson('1.5B')));
    // 28 x (1536 x 128 x 2 x (12 + 2) + 3 x 1536 x 8960) + 151936 x 1536 = 1,543,569,408 weights: 5.75 GiB in float32.
    expect(tfjsBackendFactory.refuses!({ model: qwen, runtime: 'wasm' })).toBe(
      "its float32 weights alone take 5.75 GiB, beyond the wasm runtime's 4 GiB heap",
    );
    expect(tfjsBackendFactory.refuses!({ model: qwen, runtime: 'tfjs-node' })).toBeUndefined();
    expect(tfjsBackendFactory.refuses!({ model: 'tiny', runtime: 'wasm' })).toBeUndefined();
  });
});
