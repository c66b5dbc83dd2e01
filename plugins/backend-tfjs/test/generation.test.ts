import * as tf from '@tensorflow/tfjs-core';
import { responseValues, TrainingBatch } from '@drmas/core';
import { sampleToken, SeededRandom } from '@drmas/models';
import { selectRuntime } from '../src/runtime/RuntimeSelector.js';
import { generateTokens } from '../src/generation/generateTokens.js';
import { scoreTokens } from '../src/generation/scoreTokens.js';
import type { DecoderModel } from '../src/model/DecoderModel.js';
import { batchLogits, randomModel, tinyConfigJson } from './modelFixtures.js';

const PROMPTS = [[5, 9, 13, 2, 30, 7, 1], [4], [12, 40, 3]];
let model: DecoderModel;

beforeAll(async () => {
  await selectRuntime('wasm');
  model = randomModel(tinyConfigJson('Qwen2ForCausalLM'), 21);
});
afterAll(() => model.dispose());

describe('generateTokens', () => {
  it('log-probs of sampled tokens agree with teacher-forced scoring at the sampling temperature to 1e-4 (mixed prompt lengths)', async () => {
    const out = await generateTokens(model, { prompts: PROMPTS, maxNewTokens: 12, temperature: 0.8, topP: 0.95, seed: 3 });
    const view = TrainingBatch.fromSequences(PROMPTS, out.tokenIds, { temperatures: PROMPTS.map(() => 0.8) }).all();
    const result = await scoreTokens(model, view, true);
    const scored = { logProbs: responseValues(view, result.logProbs), entropy: responseValues(view, result.entropy!) };
    for (let r = 0; r < PROMPTS.length; r++) {
      const scoredRow = scored.logProbs[r]!;
      expect(scoredRow).toHaveLength(out.tokenIds[r]!.length);
      out.logProbs[r]!.forEach((lp, j) => expect(Math.abs(lp - scoredRow[j]!)).toBeLessThan(1e-4));
      scored.entropy[r]!.forEach((e) => expect(e).toBeGreaterThan(0));
    }
  });

  it('is deterministic for a seed, and the seed matters', async () => {
    const a = await generateTokens(model, { prompts: PROMPTS, maxNewTokens: 10, seed: 42 });
    const b = await generateTokens(model, { prompts: PROMPTS, maxNewTokens: 10, seed: 42 });
    const c = await generateTokens(model, { prompts: PROMPTS, maxNewTokens: 10, seed: 43 });
    expect(b).toEqual(a);
    expect(c.tokenIds).not.toEqual(a.tokenIds);
  });

  it('greedy with the KV cache equals step-by-step argmax of the full forward; each row as if alone', async () => {
    const out = await generateTokens(model, { prompts: PROMPTS, maxNewTokens: 6, temperature: 0 });
    for (const [r, prompt] of PROMPTS.entries()) {
      const seq = [...prompt];
      for (let j = 0; j < 6; j++) {
        const logits = batchLogits(model, [seq])[0]!.at(-1)!;
        const next = logits.indexOf(Math.max(...logits));
        expect(out.tokenIds[r]![j]).toBe(next);
        seq.push(next);
      }
      const alone = await generateTokens(model, { prompts: [prompt], maxNewTokens: 6, temperature: 0 });
      expect(alone.tokenIds[0]).toEqual(out.tokenIds[r]);
    }
  });

  it('top-k 1 equals greedy', async () => {
    const greedy = await generateTokens(model, { prompts: PROMPTS, maxNewTokens: 8, temperature: 0 });
    const topK1 = await generateTokens(model, { prompts: PROMPTS, maxNewTokens: 8, temperature: 1.5, topK: 1, seed: 9 });
    expect(topK1.tokenIds).toEqual(greedy.tokenIds);
  });

  it('stops each row independently on a stop id; finished rows do not grow', async () => {
    const free = await generateTokens(model, { prompts: PROMPTS, maxNewTokens: 8, seed: 5 });
    const stopId = free.tokenIds[0]![2]!;
    const stopped = await generateTokens(model, { prompts: PROMPTS, maxNewTokens: 8, seed: 5, stopTokenIds: [stopId] });
    for (let r = 0; r < PROMPTS.length; r++) {
      const freeIds = free.tokenIds[r]!;
      const at = freeIds.indexOf(stopId);
      if (at < 0) {
        expect(stopped.tokenIds[r]).toEqual(freeIds);
        expect(stopped.finishReasons[r]).toBe('length');
      } else {
        expect(stopped.tokenIds[r]).toEqual(freeIds.slice(0, at + 1));
        expect(stopped.logProbs[r]).toEqual(free.logProbs[r]!.slice(0, at + 1));
        expect(stopped.finishReasons[r]).toBe('stop');
      }
    }
    expect(stopped.tokenIds[0]).toHaveLength(3);
  });

  it('stops on a stop string in the decoded text (kept in the output)', async () => {
    const decode = (ids: number[]) => ids.map((i) => String.fromCharCode(97 + (i % 26))).join('');
    const free = await generateTokens(model, { prompts: PROMPTS, maxNewTokens: 10, seed: 8 });
    const target = decode(free.tokenIds[1]!.slice(3, 5));
    const stopped = await generateTokens(model, { prompts: PROMPTS, maxNewTokens: 10, seed: 8, stopStrings: [target], decode });
    const text = decode(stopped.tokenIds[1]!);
    expect(text.endsWith(target)).toBe(true);
    expect(stopped.finishReasons[1]).toBe('stop');
    expect(stopped.tokenIds[1]!.length).toBeLessThanOrEqual(5);
  });

  it('streams every token and its log-prob through onToken and leaks no tensors', async () => {
    const seen: number[][] = PROMPTS.map(() => []);
    const seenLogProbs: number[][] = PROMPTS.map(() => []);
    const before = tf.memory().numTensors;
    const out = await generateTokens(model, {
      prompts: PROMPTS,
      maxNewTokens: 5,
      seed: 1,
      onToken: (r, t, lp) => {
        seen[r]!.push(t);
        seenLogProbs[r]!.push(lp);
      },
    });
    expect(tf.memory().numTensors).toBe(before);
    expect(seen).toEqual(out.tokenIds);
    expect(seenLogProbs).toEqual(out.logProbs);
  });
});

describe('sampleToken', () => {
  const logp = Float32Array.from([Math.log(0.5), Math.log(0.3), Math.log(0.15), Math.log(0.05)]);
  it('top-p keeps the smallest set reaching p, top-k the k largest', () => {
    const rng = new SeededRandom(1);
    const counts = (settings: { temperature: number; topK: number; topP: number }) => {
      const c: [number, number, number, number] = [0, 0, 0, 0];
      for (let i = 0; i < 4000; i++) c[sampleToken(logp, settings, rng)]!++;
      return c;
    };
    const p = counts({ temperature: 1, topK: 0, topP: 0.8 });
    expect(p[2] + p[3]).toBe(0);
    expect(p[0] / 4000).toBeCloseTo(0.625, 1);
    const k = counts({ temperature: 1, topK: 3, topP: 1 });
    expect(k[3]).toBe(0);
    expect(k[2]).toBeGreaterThan(0);
    expect(sampleToken(logp, { temperature: 0, topK: 0, topP: 1 }, rng)).toBe(0);
  });
});
