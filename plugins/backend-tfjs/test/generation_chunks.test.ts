import { describe, expect, test } from '@jest/globals';
import { responseValues, TrainingBatch } from '@drmas/core';
import { createTfjsPolicyBackend, generateInChunks, generateTokens, scoreTokens } from '../src/index.js';

describe('large requests run in row chunks with the same results', () => {
  test('chunked sampling equals one pass (per-row random streams), and chunked scoring equals one pass', async () => {
    const backend = await createTfjsPolicyBackend({ model: 'tiny', seed: 2, runtime: 'wasm' });
    try {
      const prompts = Array.from({ length: 7 }, (_, r) => Array.from({ length: 3 + r }, (_, j) => ((r * 31 + j * 7) % 500) + 1));
      const request = { prompts, maxNewTokens: 6, temperature: 1, topP: 0.9, seed: 11 };
      const whole = await generateTokens(backend.model, request);
      const chunked = await generateInChunks(backend.model, request, 40);
      expect(chunked.tokenIds).toEqual(whole.tokenIds);
      expect(chunked.finishReasons).toEqual(whole.finishReasons);
      // Padding differs between the passes, so float32 sums differ in the last bits.
      chunked.logProbs.forEach((row, r) => row.forEach((lp, j) => expect(lp).toBeCloseTo(whole.logProbs[r]![j]!, 5)));
      const responses = whole.tokenIds;
      const view = TrainingBatch.fromSequences(prompts, responses).all();
      const one = responseValues(view, (await scoreTokens(backend.model, view)).logProbs);
      const many = responseValues(view, (await scoreTokens(backend.model, view, false, { maxTokensPerChunk: 20 })).logProbs);
      many.forEach((row, r) => row.forEach((lp, j) => expect(lp).toBeCloseTo(one[r]![j]!, 5)));
    } finally {
      backend.dispose();
    }
  });

  test('rowKeys: rows generated apart with their keys sample what they sample in the whole request', async () => {
    const backend = await createTfjsPolicyBackend({ model: 'tiny', seed: 2, runtime: 'wasm' });
    try {
      const prompts = Array.from({ length: 4 }, (_, r) => Array.from({ length: 2 + r }, (_, j) => ((r * 17 + j * 5) % 400) + 1));
      const request = { prompts, maxNewTokens: 8, temperature: 1, seed: 5 };
      const whole = await backend.generate(request);
      const apart = await backend.generate({ ...request, prompts: [prompts[3]!, prompts[1]!], rowKeys: [3, 1] });
      expect(apart.tokenIds).toEqual([whole.tokenIds[3], whole.tokenIds[1]]);
      // Without keys the two rows take the streams of positions 0 and 1: not row 3's sample.
      const unkeyed = await backend.generate({ ...request, prompts: [prompts[3]!, prompts[1]!] });
      expect(unkeyed.tokenIds[0]).not.toEqual(whole.tokenIds[3]);
      await expect(backend.generate({ ...request, rowKeys: [0] })).rejects.toThrow('rowKeys has 1 keys for 4 prompts');
    } finally {
      backend.dispose();
    }
  });
});
