import { scoreSequences, TrainingBatch, type LossFunction, type LossInput, type TensorOps } from '@drmas/core';
import { logProbAtTemperature, topLogProbs } from '@drmas/models';
import { TfjsPolicyBackend } from '../src/TfjsPolicyBackend.js';
import { selectRuntime } from '../src/runtime/RuntimeSelector.js';
import type { DecoderModel } from '../src/model/DecoderModel.js';
import { batchLogits, logSoftmax, randomModel, tinyConfigJson } from './modelFixtures.js';
import { updateRequest } from './trainingFixtures.js';

/** log softmax(z / T)[token], in float64, from raw logits. */
function tempered(logits: number[], token: number, temperature: number): number {
  return logSoftmax(logits.map((z) => z / temperature))[token]!;
}

/** Reports the token-mean log-prob the update computed, and no gradient worth speaking of. */
const meanLogProb: LossFunction = {
  compute<T>(ops: TensorOps<T>, input: LossInput<T>) {
    const mean = ops.div(ops.sum(ops.mul(input.logProbs, input.responseMask)), input.totals.tokens);
    return { loss: ops.mul(mean, 0), metrics: { mean_logprob: ops.stopGradient(mean) } };
  },
};

describe('logProbAtTemperature', () => {
  // log_softmax([0, 1, 2]) = [-2.407606, -1.407606, -0.407606]; at T = 0.5 the logits are [0, 2, 4] and
  // logsumexp = ln(1 + e^2 + e^4) = ln 62.987206 = 4.142931.
  const row = Float32Array.from([-2.4076059, -1.4076059, -0.4076059]);

  it('is l/T - logsumexp(l/T) (hand-worked, T = 0.5)', () => {
    expect(logProbAtTemperature(row, 2, 0.5)).toBeCloseTo(4 - 4.142931, 5);
    expect(logProbAtTemperature(row, 0, 0.5)).toBeCloseTo(0 - 4.142931, 5);
  });

  it('returns the temperature-1 value for T = 1 and for greedy (T = 0)', () => {
    expect(logProbAtTemperature(row, 1, 1)).toBe(row[1]);
    expect(logProbAtTemperature(row, 1, 0)).toBe(row[1]);
  });

  it('topLogProbs: the k most likely, most likely first, at the temperature (hand-worked, T = 0.5)', () => {
    const top = topLogProbs(row, 2, 0.5);
    expect(top.map((t) => t.tokenId)).toEqual([2, 1]);
    expect(top[0]!.logProb).toBeCloseTo(4 - 4.142931, 5);
    expect(top[1]!.logProb).toBeCloseTo(2 - 4.142931, 5);
    expect(topLogProbs(row, 5, 1)).toEqual([2, 1, 0].map((tokenId) => ({ tokenId, logProb: row[tokenId] })));
    // Ties keep the lower id first; k = 0 gives none.
    expect(topLogProbs(Float32Array.from([-1, -0.5, -0.5, -3]), 2, 1).map((t) => t.tokenId)).toEqual([1, 2]);
    expect(topLogProbs(row, 0, 1)).toEqual([]);
  });
});

describe('scoring and training at a temperature', () => {
  let model: DecoderModel;
  let backend: TfjsPolicyBackend;
  beforeAll(async () => {
    await selectRuntime('wasm');
    model = randomModel(tinyConfigJson('Qwen2ForCausalLM'), 7);
    backend = new TfjsPolicyBackend('tfjs', 'test', model, undefined);
  });
  afterAll(() => backend.dispose());

  const PROMPTS = [
    [3, 7, 1, 9],
    [8, 2],
  ];
  const RESPONSES = [
    [12, 5, 20],
    [30, 4],
  ];
  const TEMPERATURES = [0.6, 1.7];

  /** Expected log-probs from the raw logits of prompt + response, at each row's temperature. */
  const expected = (): number[][] =>
    PROMPTS.map((prompt, r) => {
      const response = RESPONSES[r]!;
      const logits = batchLogits(model, [[...prompt, ...response]])[0]!;
      return response.map((token, j) => tempered(logits[prompt.length - 1 + j]!, token, TEMPERATURES[r]!));
    });

  it("score divides each row's logits by its temperature", async () => {
    const { logProbs } = await scoreSequences(backend, PROMPTS, RESPONSES, { temperatures: TEMPERATURES });
    const want = expected();
    logProbs.forEach((row, r) => row.forEach((lp, j) => expect(lp).toBeCloseTo(want[r]![j]!, 4)));
    const plain = await scoreSequences(backend, PROMPTS, RESPONSES);
    expect(Math.abs(plain.logProbs[0]![0]! - logProbs[0]![0]!)).toBeGreaterThan(1e-3);
  });

  it('generate records log-probs at the sampling temperature, equal to scoring at it', async () => {
    const out = await backend.generate({ prompts: PROMPTS, maxNewTokens: 5, temperature: 0.6, seed: 3, stopTokenIds: [] });
    const scored = await scoreSequences(backend, PROMPTS, out.tokenIds, { temperatures: [0.6, 0.6] });
    out.logProbs.forEach((row, r) => row.forEach((lp, j) => expect(lp).toBeCloseTo(scored.logProbs[r]![j]!, 4)));
  });

  it("an update computes the policy's log-probs at the batch's row temperatures", async () => {
    const batch = TrainingBatch.fromSequences(PROMPTS, RESPONSES, { temperatures: TEMPERATURES }).all();
    const result = await backend.update(updateRequest(batch, meanLogProb, 1, { optimizer: { lr: 1e-3 } }));
    const want = expected().flat();
    expect(result.metrics.mean_logprob).toBeCloseTo(want.reduce((s, x) => s + x, 0) / want.length, 4);
  });

  it('rejects a temperature list of the wrong length', async () => {
    await expect(scoreSequences(backend, PROMPTS, RESPONSES, { temperatures: [0.5] })).rejects.toThrow(/2 prompts but 1 temperatures/);
  });
});
