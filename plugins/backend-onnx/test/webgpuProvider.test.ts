import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { lossTotals, TrainingBatch, type BatchView } from '@drmas/core';
import type { DecoderConfig, HostTensor } from '@drmas/models';
import { detectWebGpu, type ProviderAvailability } from '../src/ExecutionProvider.js';
import { OnnxPolicyBackend } from '../src/OnnxPolicyBackend.js';
import { OnnxTrainer } from '../src/training/OnnxTrainer.js';
import {
  ARCHITECTURE_CASES,
  maxAbsDiff,
  policyLoss,
  randomWeights,
  relativeError,
  tinyConfigJson,
  updateRequest,
} from './parityFixtures.js';
import { describeSlow } from '../../../test/support/describeSlow.js';

/**
 * `provider: webgpu` runs the engine's own graphs (prefill, decode, score and the training graph's forward and
 * backward) on onnxruntime-node's WebGPU execution provider, nodes it lacks on the CPU. Where no WebGPU adapter is
 * found, a named `webgpu` falls back to the CPU with a warning that says why. Where one is (a GPU's Vulkan driver, or
 * Mesa's lavapipe, a software device: `bash scripts/install-test-deps.sh vulkan`), the slow tests check that every
 * graph gives the CPU's numbers: the same sampled tokens, log-probs within 1e-5, gradients and a full clipped AdamW
 * update within 1e-4 relative. Speed on a GPU is the benchmark's to measure (`bench/README.md`), not these tests'.
 */

let webgpu: ProviderAvailability;
beforeAll(async () => {
  webgpu = await detectWebGpu();
  if (!webgpu.available)
    console.warn(
      `webgpuProvider: no WebGPU adapter here (${webgpu.reason}); the graph comparisons skip (bash scripts/install-test-deps.sh vulkan)`,
    );
}, 60_000);

describe('provider: webgpu, where it cannot run', () => {
  it('falls back to the CPU with a warning naming why and how to get it', async () => {
    const { config, weights } = randomWeights(tinyConfigJson('Qwen3ForCausalLM', {}), 5);
    const warnings: string[] = [];
    const backend = await OnnxPolicyBackend.create(config, weights, undefined, {
      provider: 'webgpu',
      warn: (m) => warnings.push(m),
      detectProvider: (provider) =>
        provider === 'webgpu'
          ? Promise.resolve({ available: false, reason: 'Failed to get a WebGPU adapter: No supported adapters' })
          : undefined,
    });
    expect(warnings).toEqual([
      expect.stringMatching(
        /^onnx backend: WebGPU was requested but is unavailable: Failed to get a WebGPU adapter: No supported adapters; falling back to the CPU execution provider \(to use WebGPU, install a Vulkan driver .*\(bash scripts\/install-test-deps\.sh vulkan\)\)$/,
      ),
    ]);
    expect(backend.provider).toMatchObject({ provider: 'cpu', requested: 'webgpu' });
    expect(backend.runtime).toMatch(/\(CPU, \d+ threads?\) \(fell back: WebGPU was requested/);
    expect((await backend.generate({ prompts: [[1, 2, 3]], maxNewTokens: 2, temperature: 0 })).tokenIds[0]).toHaveLength(2);
    backend.dispose();
  });

  it('is detected honestly: a named webgpu runs on it where an adapter is found, else on the CPU with its reason', async () => {
    const { config, weights } = randomWeights(tinyConfigJson('Qwen3ForCausalLM', {}), 5);
    const warnings: string[] = [];
    const backend = await OnnxPolicyBackend.create(config, weights, undefined, { provider: 'webgpu', warn: (m) => warnings.push(m) });
    if (webgpu.available) {
      expect(backend.provider.provider).toBe('webgpu');
      expect(backend.runtime).toMatch(/\(WebGPU\)$/);
      expect(warnings).toEqual([]);
    } else {
      expect(backend.provider.fallbackReason).toBe(`WebGPU was requested but is unavailable: ${webgpu.reason}`);
      expect(warnings).toHaveLength(1);
    }
    backend.dispose();
  });

  it('auto never takes it: it picks CUDA or the CPU whatever WebGPU finds', async () => {
    const { config, weights } = randomWeights(tinyConfigJson('Qwen3ForCausalLM', {}), 5);
    const backend = await OnnxPolicyBackend.create(config, weights, undefined, {
      provider: 'auto',
      detectProvider: (provider) => Promise.resolve({ available: provider !== 'cuda', reason: 'not here' }),
    });
    expect(backend.provider.provider).toBe('cpu');
    backend.dispose();
  });
});

const PROMPTS = [[3, 7, 1, 9, 4, 22], [8], [30, 4, 11, 2]];
const RESPONSES = [
  [12, 5, 20, 2],
  [30, 4, 11, 7, 7, 1, 40],
  [6, 9],
];

/** A batch with old log-probs off the model's (so the PPO clip acts on some tokens) and advantages of both signs. */
function batchOf(): BatchView {
  const batch = TrainingBatch.fromSequences(PROMPTS, RESPONSES, { temperatures: [1, 0.7, 1.3] });
  batch.oldLogProbs = new Float32Array(batch.rows * batch.responseLength);
  for (let i = 0; i < batch.oldLogProbs.length; i++) {
    batch.oldLogProbs[i] = -3 + ((i * 7) % 5) * 0.4;
    batch.advantages[i] = ((i * 3) % 5) / 2 - 1;
  }
  return batch.all();
}

const QUICK = 'Qwen3 (q/k norm), tied';
describeSlow.each(ARCHITECTURE_CASES.filter((c) => c.label === QUICK || c.label.startsWith('Llama, llama3')))(
  'provider: webgpu runs the same graphs as the CPU (slow): $label',
  ({ architecture, extra }) => {
    let config: DecoderConfig;
    let weights: Map<string, HostTensor>;
    let cpu: OnnxPolicyBackend;
    let gpu: OnnxPolicyBackend;
    beforeAll(async () => {
      ({ config, weights } = randomWeights(tinyConfigJson(architecture, extra), 11));
      // Each engine trains its weight buffers in place: each gets a copy.
      const copy = () => new Map([...weights].map(([name, t]) => [name, { shape: [...t.shape], data: Float32Array.from(t.data) }]));
      cpu = await OnnxPolicyBackend.create(config, copy(), undefined, { provider: 'cpu' });
      gpu = await OnnxPolicyBackend.create(config, copy(), undefined, { provider: 'webgpu', warn: () => {} });
    }, 120_000);
    afterAll(() => {
      cpu?.dispose();
      gpu?.dispose();
    });
    const needsAdapter = () => {
      if (!webgpu.available) console.warn(`webgpuProvider: skipped, ${webgpu.reason}`);
      return webgpu.available;
    };

    it('generation: the same tokens and log-probs within 1e-5, over prompts of unequal lengths', async () => {
      if (!needsAdapter()) return;
      expect(gpu.provider.provider).toBe('webgpu');
      const request = { prompts: PROMPTS, maxNewTokens: 8, temperature: 1, seed: 3 };
      const [a, b] = [await cpu.generate(request), await gpu.generate(request)];
      expect(b.tokenIds).toEqual(a.tokenIds);
      expect(maxAbsDiff(b.logProbs, a.logProbs)).toBeLessThan(1e-5);
    }, 120_000);

    it('training: loss and every gradient within 1e-4 relative, then one clipped AdamW update to the same weights', async () => {
      if (!needsAdapter()) return;
      const view = batchOf();
      const totals = lossTotals(view, { responseLength: 7, microBatchSize: 2 });
      const loss = policyLoss({ aggregation: 'seq-mean-token-mean', klCoef: 0, entropyCoef: 0 });
      const onCpu = await OnnxTrainer.create(config, weights);
      const onGpu = await OnnxTrainer.create(config, weights, {}, { provider: 'webgpu' });
      const a = await onCpu.gradients({ batch: view, totals, loss, microBatchSize: 2 });
      const expected = new Map([...a.gradients].map(([name, g]) => [name, Float32Array.from(g)]));
      const b = await onGpu.gradients({ batch: view, totals, loss, microBatchSize: 2 });
      expect(Math.abs(b.loss - a.loss)).toBeLessThan(1e-4 * Math.max(1, Math.abs(a.loss)));
      const worst = Math.max(...[...expected].map(([name, g]) => relativeError(b.gradients.get(name)!, g)));
      expect(worst).toBeLessThan(1e-4);
      await onCpu.release();
      await onGpu.release();

      // The engines' own update (the trainer on the provider the engine was given), and the weights it leaves.
      const request = updateRequest(view, loss, 2, { optimizer: { lr: 1e-2 } });
      const [ua, ub] = [await cpu.update(request), await gpu.update(request)];
      expect(Math.abs(ub.gradNorm - ua.gradNorm)).toBeLessThan(1e-4 * ua.gradNorm);
      const [wa, wb] = [await cpu.exportWeights(), await gpu.exportWeights()];
      for (const [name, t] of wa) expect(relativeError(wb.get(name)!.data, t.data)).toBeLessThan(1e-4);
    }, 300_000);
  },
);
