import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { longestResponse, lossTotals, type BatchView } from '@drmas/core';
import { OnnxTrainer, type GradientRequest } from '../src/training/OnnxTrainer.js';
import { OPTIMIZER, AGENT_TURNS, makeAgentBatch, weightedCrossEntropy } from '../../backend-tfjs/test/trainingFixtures.js';
import { randomWeights, tinyConfigJson } from './parityFixtures.js';

/**
 * `rowAgents` on the onnx trainer: each agent's share of the gradient is the gradient of its rows alone (the same
 * totals), and the shares (computed separately) add up element by element to the gradient it reports.
 */

let trainer: OnnxTrainer;
beforeAll(async () => {
  const { config, weights } = randomWeights(tinyConfigJson('Qwen2ForCausalLM'), 7);
  trainer = await OnnxTrainer.create(config, weights);
});
afterAll(() => trainer.release());

function request(rows: BatchView, whole: BatchView, rowAgents?: GradientRequest['rowAgents']): GradientRequest {
  return {
    batch: rows,
    totals: lossTotals(whole, { responseLength: longestResponse(whole), microBatchSize: 2 }),
    loss: weightedCrossEntropy,
    microBatchSize: 2,
    rowAgents,
  };
}

const copy = (gradients: Map<string, Float32Array>) => new Map([...gradients].map(([name, g]) => [name, Float32Array.from(g)]));
const norm = (gradients: Map<string, Float32Array>) =>
  Math.sqrt([...gradients.values()].reduce((s, g) => s + g.reduce((t, x) => t + x * x, 0), 0));

describe('per-agent gradient norms (onnx)', () => {
  it("each agent's norm is that of its rows' gradient alone, and those gradients add up to the reported one", async () => {
    const batch = makeAgentBatch(AGENT_TURNS);
    const whole = batch.all();
    const split = await trainer.gradients(request(whole, whole, { codes: batch.ids.agent.codes, agentCount: 3 }));
    const total = copy(split.gradients);
    const norms = split.agentGradNorms!;
    const summed = new Map([...total].map(([name, g]) => [name, new Float32Array(g.length)]));
    for (const [k, name] of batch.ids.agent.names.entries()) {
      const rows = batch.view(AGENT_TURNS.flatMap((turn, row) => (turn.agent === name ? [row] : [])));
      const alone = (await trainer.gradients(request(rows, whole))).gradients;
      const want = norm(alone);
      expect(want).toBeGreaterThan(0);
      expect(Math.abs(norms[k]! - want)).toBeLessThanOrEqual(1e-5 * want);
      for (const [name, g] of alone) summed.get(name)!.forEach((_, i, out) => (out[i]! += g[i]!));
    }
    let scale = 0;
    let error = 0;
    for (const [name, g] of total) {
      g.forEach((x, i) => {
        scale = Math.max(scale, Math.abs(x));
        error = Math.max(error, Math.abs(x - summed.get(name)![i]!));
      });
    }
    expect(error).toBeLessThanOrEqual(1e-5 * scale);
  });

  it('update with measureOnly reports the norms and leaves weights and the optimizer step untouched', async () => {
    const batch = makeAgentBatch(AGENT_TURNS);
    const before = trainer.optimizer.step;
    const weight = trainer.weights.get('lm_head.weight')!.data.slice();
    const result = await trainer.update({
      ...request(batch.all(), batch.all(), { codes: batch.ids.agent.codes, agentCount: 3 }),
      microBatchSize: 2,
      optimizer: OPTIMIZER,
      lrScale: 1,
      measureOnly: true,
    });
    expect(result.skipped).toBe(true);
    expect(result.agentGradNorms).toHaveLength(3);
    expect(trainer.optimizer.step).toBe(before);
    expect(Buffer.from(trainer.weights.get('lm_head.weight')!.data.buffer).equals(Buffer.from(weight.buffer))).toBe(true);
  });
});
