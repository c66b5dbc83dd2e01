import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { longestResponse, lossTotals, type BatchView, type UpdateRequest } from '@drmas/core';
import { selectRuntime } from '../src/runtime/RuntimeSelector.js';
import { PolicyTrainer } from '../src/training/PolicyTrainer.js';
import type { DecoderModel } from '../src/model/DecoderModel.js';
import { randomModel, tinyConfigJson } from './modelFixtures.js';
import { OPTIMIZER, AGENT_TURNS, makeAgentBatch, weightedCrossEntropy } from './trainingFixtures.js';

/**
 * `UpdateRequest.rowAgents` on the tfjs trainer: each agent's share of the gradient, against a separate update of
 * that agent's rows alone (the same totals), and the shares adding up to the whole gradient (the parallelogram law:
 * with the loss linear in the advantages, negating agent b's advantages negates its share, so
 * |g_a + g_b|^2 + |g_a - g_b|^2 = 2 |g_a|^2 + 2 |g_b|^2 holds only if the two norms are of parts that sum to the
 * gradient whose norm the plain update reports).
 */

let model: DecoderModel;
let trainer: PolicyTrainer;
beforeAll(async () => {
  await selectRuntime('wasm');
  model = randomModel(tinyConfigJson('Qwen2ForCausalLM'), 7);
  trainer = new PolicyTrainer(model);
});
afterAll(() => {
  trainer.dispose();
  model.dispose();
});

/** A measuring update of `rows`, normalized by the totals of `whole`. */
function request(rows: BatchView, whole: BatchView, extra: Partial<UpdateRequest> = {}): UpdateRequest {
  return {
    batch: rows,
    totals: lossTotals(whole, { responseLength: longestResponse(whole), microBatchSize: 2 }),
    loss: weightedCrossEntropy,
    microBatchSize: 2,
    optimizer: OPTIMIZER,
    lrScale: 1,
    measureOnly: true,
    ...extra,
  };
}

const close = (got: number, want: number) => expect(Math.abs(got - want)).toBeLessThanOrEqual(1e-5 * Math.max(1, Math.abs(want)));

describe('per-agent gradient norms (tfjs)', () => {
  it("each agent's norm is that of an update of its rows alone; the total is the plain update's; nothing is applied", async () => {
    const batch = makeAgentBatch(AGENT_TURNS);
    const whole = batch.all();
    const before = model.weights.get('lm_head.weight')!.dataSync().slice();
    const agents = { codes: batch.ids.agent.codes, agentCount: batch.ids.agent.names.length };
    const split = await trainer.update(request(whole, whole, { rowAgents: agents }));
    const plain = await trainer.update(request(whole, whole));
    expect(split.skipped).toBe(true);
    close(split.gradNorm, plain.gradNorm);
    // Two rows a micro-batch: agent a's 3 rows take 2, b's 2 and c's 1 take one each; the 6 rows together take 3.
    expect(split.metrics['actor/micro_batches']).toBe(4);
    expect(plain.metrics['actor/micro_batches']).toBe(3);
    expect(batch.ids.agent.names).toEqual(['a', 'b', 'c']);
    for (const [k, name] of batch.ids.agent.names.entries()) {
      const rows = batch.view(AGENT_TURNS.flatMap((turn, row) => (turn.agent === name ? [row] : [])));
      const alone = await trainer.update(request(rows, whole));
      expect(alone.gradNorm).toBeGreaterThan(0);
      close(split.agentGradNorms![k]!, alone.gradNorm);
    }
    expect(Buffer.from(model.weights.get('lm_head.weight')!.dataSync().buffer).equals(Buffer.from(before.buffer))).toBe(true);
  });

  it('micro-batches of at most 10 padded tokens take the rows widest first: 4 runs where the rows in order take 5', async () => {
    // Rows (prompt + response): 0: 3+3, 1: 2+2, 2: 3+4, 3: 3+1, 4: 2+3, 5: 1+2; widest first 2, 0, 4, 1, 3, 5.
    // {2}; with 0, 2 x (3+4) = 14. {0}; with 4, 2 x (3+3) = 12. {4,1} 2 x (2+3) = 10. {3,5} 2 x (3+2) = 10.
    // In order: {0}, {1}, {2}, {3} (each with the next over 10), {4,5}.
    const whole = makeAgentBatch(AGENT_TURNS).all();
    const budgeted = await trainer.update(request(whole, whole, { microBatchTokens: 10 }));
    expect(budgeted.metrics['actor/micro_batches']).toBe(4);
    close(budgeted.gradNorm, (await trainer.update(request(whole, whole))).gradNorm);
  });

  it("two agents' shares add up to the gradient (parallelogram law with b's advantages negated)", async () => {
    const two = AGENT_TURNS.filter((turn) => turn.agent !== 'c');
    const batch = makeAgentBatch(two);
    const flipped = makeAgentBatch(two.map((turn) => (turn.agent === 'b' ? { ...turn, advantage: -turn.advantage! } : turn)));
    const agents = { codes: batch.ids.agent.codes, agentCount: 2 };
    const split = await trainer.update(request(batch.all(), batch.all(), { rowAgents: agents }));
    const [normA, normB] = split.agentGradNorms!;
    const sum = (await trainer.update(request(batch.all(), batch.all()))).gradNorm;
    const difference = (await trainer.update(request(flipped.all(), flipped.all()))).gradNorm;
    // Not a trivial identity: |g_a + g_b| differs from sqrt(|g_a|^2 + |g_b|^2) by the cross term.
    expect(Math.abs(sum ** 2 - (normA! ** 2 + normB! ** 2))).toBeGreaterThan(1e-4 * sum ** 2);
    close(sum ** 2 + difference ** 2, 2 * normA! ** 2 + 2 * normB! ** 2);
  });

  it('a real step with rowAgents applies the update one without applies (the same loss, summed in another order)', async () => {
    const batch = makeAgentBatch(AGENT_TURNS);
    const agents = { codes: batch.ids.agent.codes, agentCount: 3 };
    const weightsAfter = async (extra: Partial<UpdateRequest>) => {
      const fresh = randomModel(tinyConfigJson('Qwen2ForCausalLM'), 7);
      const freshTrainer = new PolicyTrainer(fresh);
      const step = await freshTrainer.update(
        request(batch.all(), batch.all(), { measureOnly: false, optimizer: { ...OPTIMIZER, lr: 1e-3 }, ...extra }),
      );
      expect(step.skipped).toBe(false);
      const out = { norms: step.agentGradNorms, weights: [...fresh.weights.values()].map((w) => w.dataSync().slice()) };
      freshTrainer.dispose();
      fresh.dispose();
      return out;
    };
    const split = await weightsAfter({ rowAgents: agents });
    const plain = await weightsAfter({});
    expect(split.norms).toHaveLength(3);
    expect(plain.norms).toBeUndefined();
    let largest = 0;
    split.weights.forEach((w, i) => w.forEach((x, j) => (largest = Math.max(largest, Math.abs(x - plain.weights[i]![j]!)))));
    // lr 1e-3 moves weights by about 1e-3; a different summation order moves them by float32 rounding only.
    expect(largest).toBeLessThan(1e-5);
  });
});
