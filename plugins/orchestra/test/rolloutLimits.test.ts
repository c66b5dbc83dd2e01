import { afterAll, describe, expect, test } from '@jest/globals';
import { BackendFactory, type ResolvedConfig } from '@drmas/core';
import type { OrchestraConfig } from '../src/plugin/orchestraSchema.js';
import {
  agentLimits,
  checkAgentRoles,
  checkMemory,
  checkPositions,
  createMathOrchestra,
  estimateEpisodeMemory,
  PromptedAgent,
  type Agent,
} from '@drmas/plugin-orchestra';
import { TempProject } from '../../../test/support/tempProject.js';
import { kernelConfig } from '../../../core/test/kernelConfig.js';
import { createOnnxBackendFactory } from '../../backend-onnx/src/plugin/OnnxBackendPlugin.js';

const onnxBackendFactory = createOnnxBackendFactory();

const project = new TempProject('rollout-limits');
afterAll(() => project.dispose());

/** A Qwen2.5-0.5B-shaped config.json: 24 layers, 2 key/value heads of 64, 32,768 positions. */
const qwenDir = project
  .write({
    'qwen/config.json': {
      architectures: ['Qwen2ForCausalLM'],
      model_type: 'qwen2',
      hidden_size: 896,
      intermediate_size: 4864,
      num_hidden_layers: 24,
      num_attention_heads: 14,
      num_key_value_heads: 2,
      vocab_size: 151936,
      max_position_embeddings: 32768,
      rms_norm_eps: 1e-6,
      rope_theta: 1000000,
      tie_word_embeddings: true,
    },
  })
  .path('qwen');

/**
 * A config with the orchestra's sections as far as these checks read them (not every key the schema would fill); a
 * memory budget of 6 GiB, whatever the machine (an engine's bound may grow with it).
 */
function config(extra: Partial<ResolvedConfig> & Record<string, unknown>): OrchestraConfig {
  return kernelConfig(1, {
    trainer: { steps: 1, seed: 0, outputDir: 'runs', saveEvery: 0, keepLast: 3, memoryBudget: '6GiB' },
    eval: { every: 0, atEnd: true, atStart: false, k: 16, tasks: 0, tasksPerBatch: 16 },
    rollout: { promptsPerStep: 16, samplesPerPrompt: 8 },
    orchestra: { name: 'search', maxLoops: 2 },
    ...extra,
  }) as OrchestraConfig;
}

function agents(sampling: Record<string, number>): Map<string, Agent> {
  return new Map(
    Object.entries(sampling).map(([role, maxNewTokens]) => [
      role,
      new PromptedAgent({ role, prompt: '{question}', tag: 'answer', sampling: { maxNewTokens } }),
    ]),
  );
}

describe('what a step can hold', () => {
  test("the estimate is rows x a round's longest row (every response of its loops) x the key/value cache, plus each turn's step records", () => {
    const cfg = config({ models: { policy: { backend: 'tfjs', model: qwenDir, runtime: 'auto' } } });
    const limits = agentLimits(cfg, agents({ searcher: 64, answerer: 512, verifier: 32 }));
    // 3 agents x 2 loops x 4 rounds = 24 turns; a round's last call holds 2 x (64 + 512 + 32) = 1,216 tokens of
    // responses; cache 2 x 24 layers x 2 heads x 64 x 4 bytes = 24,576; 128 rows x 1,216 x 24,576 = 3,825,205,248,
    // records 128 rows x 24 turns x 512 x 64 = 100,663,296: 3,925,868,544 bytes = 3.65625 GiB.
    const estimate = estimateEpisodeMemory(limits, { count: 16 * 8, why: 'p x s' }, { turns: 24, loops: 2 });
    expect(estimate.bytes).toBe(3_925_868_544);
    expect(estimate.arithmetic).toBe(
      "128 rows (p x s) x 1,216 tokens (a round's longest row: orchestra.maxLoops 2 x (agents.searcher.sampling.maxNewTokens 64 + agents.answerer.sampling.maxNewTokens 512 + agents.verifier.sampling.maxNewTokens 32), each turn's prompt carrying the round's earlier outputs) x 24,576 bytes per token (24,576 of model policy's key/value cache) + 128 rows x 24 turns x 512 tokens (agents.answerer.sampling.maxNewTokens) x 64 bytes of step records = 3.66 GiB",
    );
    // One agent, one loop: its own response.
    expect(estimateEpisodeMemory(limits.slice(1, 2), { count: 2, why: 'p x s' }, { turns: 1, loops: 1 }).bytes).toBe(
      2 * 512 * 24_576 + 2 * 512 * 64,
    );
  });

  test('on onnx (named, or auto ranking it first) a training step also counts the activations its training pass keeps; an evaluation does not', () => {
    const roles = { namesOf: () => ['onnx'], getNamed: () => onnxBackendFactory } as never;
    for (const backend of ['onnx', 'auto']) {
      const cfg = config({
        models: { policy: { backend, model: 'tiny', runtime: 'auto' } },
        rollout: { promptsPerStep: 2, samplesPerPrompt: 4 },
        eval: { every: 0, atEnd: true, atStart: false, k: 1, tasks: 0, tasksPerBatch: 8 },
        orchestra: { name: 'search', maxLoops: 1 },
      });
      const limits = agentLimits(cfg, agents({ answerer: 100 }), roles);
      // tiny (hidden 256, 4 layers, 2 kv heads of 64, MLP 704, vocab 512), per token per layer 4 x 256 + 2 x 2 x 64
      // + 3 x 704 = 3,392 floats, x 4 layers + 2 x 512 logits = 14,592 floats = 58,368 bytes; cache 4,096; 1 turn x 64.
      // 8 rows x 100 x (4,096 + 58,368 + 64) = 50,022,400 bytes; evaluating 8 rows x 100 x (4,096 + 64) = 3,328,000.
      // The training state besides: 4 layers x (256 x 64 x 2 x (4 + 2) + 3 x 256 x 704) + 2 x 512 x 256 = 3,211,264
      // float32 weights (12,845,056 bytes), 5 copies under the fused layout (weights, the stacked copy counted whole, gradients, two
      // moments): 64,225,280 bytes; what each training run holds besides: onnxruntime-node's returned copy of the
      // gradients 12,845,056, three [512, 256] gradients 3 x 524,288 = 1,572,864, Node and onnxruntime 300 MiB =
      // 314,572,800; 393,216,000 bytes (375 MiB) of state, so 443,238,400 in all.
      expect(estimateEpisodeMemory(limits, { count: 8, why: 'p x s' }, { turns: 1, loops: 1 }).arithmetic).toBe(
        "8 rows (p x s) x 100 tokens (agents.answerer.sampling.maxNewTokens) x 62,464 bytes per token (4,096 of model policy's key/value cache + 58,368 of model policy's activations kept for the backward pass on onnx) + 8 rows x 1 turns x 100 tokens (agents.answerer.sampling.maxNewTokens) x 64 bytes of step records + 375 MiB of model policy's training state (float32 weights, the graphs' stacked copy (at most one), gradients and AdamW's two moments: 5 x 12.3 MiB; onnxruntime-node's copy of the gradients a run returns 12.3 MiB, three [vocab, hidden] gradients in a run 1.5 MiB, Node and onnxruntime 300 MiB) = 423 MiB",
      );
      expect(() => checkMemory(cfg, limits, 1, { bytes: 443_238_400, description: 'enough' })).not.toThrow();
      expect(() => checkMemory(cfg, limits, 1, { bytes: 443_238_399, description: 'short' })).toThrow(
        expect.objectContaining({ code: 'LIMIT_EXCEEDED', key: 'rollout.samplesPerPrompt' }),
      );
    }
  });

  test('models.<id>.kvCachePrecision float16 on onnx: the estimate counts 2 bytes a cached value', () => {
    const roles = { namesOf: () => ['onnx'], getNamed: () => onnxBackendFactory } as never;
    const estimate = (extra: Record<string, unknown>) =>
      estimateEpisodeMemory(
        agentLimits(
          config({ models: { policy: { backend: 'onnx', model: qwenDir, runtime: 'auto', ...extra } } }),
          agents({ solver: 128, verifier: 128 }),
          roles,
        ),
        { count: 16, why: 'p x s' },
        { turns: 4, loops: 2 },
      );
    const [full, half] = [estimate({}), estimate({ kvCachePrecision: 'float16' })];
    // 24 layers x 2 key/value heads x 64 x (a key and a value) x 2 bytes = 12,288 a token, half of float32's 24,576:
    // 16 rows x 512 tokens x 12,288 = 100,663,296 bytes fewer.
    expect(full.bytes - half.bytes).toBe(100_663_296);
    expect(half.arithmetic).toContain("x 12,288 bytes per token (12,288 of model policy's float16 key/value cache)");
  });

  test('on onnx a Qwen2.5-0.5B-sized model counts its training state once and the activations of one micro-batch of its token bound', () => {
    const roles = { namesOf: () => ['onnx'], getNamed: () => onnxBackendFactory } as never;
    const cfg = config({ models: { policy: { backend: 'onnx', model: qwenDir, runtime: 'auto' } } });
    const limits = agentLimits(cfg, agents({ solver: 128, verifier: 128 }), roles);
    // 24 x (896 x 64 x 2 x (14 + 2) + 3 x 896 x 4,864) + 151,936 x 896 (tied) = 493,961,216 weights, 1,975,844,864
    // bytes in float32; weights, gradients and two moments 7,903,379,456; onnxruntime-node's returned copy of the
    // gradients of the largest of the backward's two segments (the head and 8 layers: 544,538,624 + 8 x 59,637,760 =
    // 1,021,640,704) within one micro-batch's activations (2 x 282 tokens x 1,900,544 = 1,071,906,816): nothing;
    // Node and onnxruntime 314,572,800: 8,217,952,256 bytes, counted once for the two agents.
    const episode = { turns: 4, loops: 2 };
    const withState = estimateEpisodeMemory(limits, { count: 16, why: 'p x s' }, episode);
    const { state, ...rest } = limits[0]!;
    const without = estimateEpisodeMemory([{ ...rest }, { ...rest, role: 'verifier' }], { count: 16, why: 'p x s' }, episode);
    expect(state!.bytes).toBe(8_217_952_256);
    expect(withState.bytes - without.bytes).toBe(8_217_952_256);
    // Activations per token: per layer 4 x 896 + 2 x 2 x 64 + 3 x 4,864 = 18,432 floats, x 24 layers, + 2 x 16,384
    // (the head's chunk) = 475,136 floats = 1,900,544 bytes, counted twice (3,801,088) at this size; the engine runs
    // micro-batches of at most floor(2^29 / 1,900,544) = 282 tokens, but a round's last row is 2 loops x (128 + 128)
    // = 512 tokens and a micro-batch holds a whole row: 512 x 3,801,088 = 1,946,157,056 bytes. The sampling side: 16
    // rows x 512 tokens x 24,576 of cache = 201,326,592, and 16 rows x 4 turns x 128 x 64 = 524,288 of records. In all
    // 10,365,960,192 bytes (9.654 GiB).
    expect(withState.bytes).toBe(10_365_960_192);
    expect(withState.arithmetic).toBe(
      "16 rows (p x s) x 512 tokens (a round's longest row: orchestra.maxLoops 2 x (agents.solver.sampling.maxNewTokens 128 + agents.verifier.sampling.maxNewTokens 128), each turn's prompt carrying the round's earlier outputs) x 24,576 bytes per token (24,576 of model policy's key/value cache) + 16 rows x 4 turns x 128 tokens (agents.solver.sampling.maxNewTokens) x 64 bytes of step records + one micro-batch of 512 tokens (one whole row) x 3,801,088 bytes of 2 x the activations kept for the backward pass on onnx + 7.65 GiB of model policy's training state (float32 weights read in place by every graph, gradients and AdamW's two moments: 4 x 1.84 GiB; onnxruntime-node's copy of the largest of 2 segments' gradients a run returns 974 MiB beyond one micro-batch's activations 1020 MiB: 0 B; Node and onnxruntime 300 MiB) = 9.65 GiB",
    );
    // agents.<role>.train.microBatchTokens replaces the engine's bound: 1,000 tokens x 3,801,088 = 3,801,088,000.
    const configured = config({
      models: { policy: { backend: 'onnx', model: qwenDir, runtime: 'auto' } },
      agents: { solver: { train: { microBatchTokens: 1000 } }, verifier: { train: { microBatchTokens: 1000 } } },
    });
    const bounded = estimateEpisodeMemory(
      agentLimits(configured, agents({ solver: 128, verifier: 128 }), roles),
      { count: 16, why: 'p x s' },
      episode,
    );
    expect(bounded.bytes).toBe(201_326_592 + 524_288 + 3_801_088_000 + 8_217_952_256);
    expect(bounded.arithmetic).toContain('one micro-batch of 1,000 tokens (agents.solver.train.microBatchTokens) x 3,801,088 bytes');
    // The engine's bound grows with the budget: 1/14 of 16 GiB is 1,227,133,513 bytes of activations, 645 tokens of
    // 1,900,544 (more than a row's 512): 645 x 3,801,088 = 2,451,701,760 bytes for the micro-batch.
    const larger = config({
      models: { policy: { backend: 'onnx', model: qwenDir, runtime: 'auto' } },
      trainer: { steps: 1, seed: 0, outputDir: 'runs', saveEvery: 0, keepLast: 3, memoryBudget: '16GiB' },
    });
    const grown = estimateEpisodeMemory(
      agentLimits(larger, agents({ solver: 128, verifier: 128 }), roles),
      { count: 16, why: 'p x s' },
      episode,
    );
    expect(grown.bytes).toBe(201_326_592 + 524_288 + 2_451_701_760 + 8_217_952_256);
    expect(grown.arithmetic).toContain(
      "one micro-batch of 645 tokens (model policy's engine's bound: activations of 1/14 of the memory budget, 1.14 GiB) x 3,801,088 bytes",
    );
  });

  test("on onnx a model under LoRA adapters counts its frozen base once and every agent's adapter five times", () => {
    const roles = { namesOf: () => ['onnx'], getNamed: () => onnxBackendFactory } as never;
    const lora = { rank: 16, alpha: 32, targetModules: ['q_proj', 'v_proj'] };
    const cfg = config({
      models: { policy: { backend: 'onnx', model: qwenDir, runtime: 'auto' } },
      agents: { solver: { lora }, verifier: { lora } },
    });
    const limits = agentLimits(cfg, agents({ solver: 128, verifier: 128 }), roles);
    // Per layer q_proj 16 x (896 + 896) = 28,672 and v_proj 16 x (896 + 128) = 16,384: 45,056 x 24 layers =
    // 1,081,344 values an adapter, 2 adapters 8,650,752 bytes, x 5 (weights, gradients, two moments, the returned
    // copy) = 43,253,760; the base 493,961,216 x 4 = 1,975,844,864 once; Node and onnxruntime 314,572,800.
    expect(limits.map((l) => l.state!.bytes)).toEqual([2_333_671_424, 2_333_671_424]);
    const estimate = estimateEpisodeMemory(limits, { count: 16, why: 'p x s' }, { turns: 4, loops: 2 });
    expect(estimate.arithmetic).toContain(
      "2.17 GiB of model policy's training state (float32 frozen base 1.84 GiB; 2 LoRA adapters' weights, gradients, AdamW's two moments and the gradients' returned copy 5 x 8.25 MiB; Node and onnxruntime 300 MiB)",
    );
    // Counted once: 201,326,592 + 524,288 of sampling and records + 1,946,157,056 of one micro-batch of a whole row
    // (the test above) + the state.
    expect(estimate.bytes).toBe(201_326_592 + 524_288 + 1_946_157_056 + 2_333_671_424);
  });

  test('on onnx a bound of more tokens than the step samples changes nothing; a smaller one counts one micro-batch, of a row at least', () => {
    const roles = { namesOf: () => ['onnx'], getNamed: () => onnxBackendFactory } as never;
    const estimate = (microBatchTokens: number) => {
      const cfg = config({
        models: { policy: { backend: 'onnx', model: 'tiny', runtime: 'auto' } },
        agents: { answerer: { train: { microBatchTokens } } },
      });
      return estimateEpisodeMemory(agentLimits(cfg, agents({ answerer: 100 }), roles), { count: 8, why: 'p x s' }, { turns: 1, loops: 1 })
        .bytes;
    };
    // tiny, 8 rows x 100 tokens: 800 tokens of activations at 58,368 bytes (the test above) whenever the bound is
    // 800 or more; a bound of 200 keeps 200 x 58,368 = 11,673,600 of the 46,694,400; a bound of 50, under a row's
    // 100 tokens, keeps one row: 5,836,800.
    expect(estimate(800)).toBe(443_238_400);
    expect(estimate(200)).toBe(443_238_400 - 46_694_400 + 11_673_600);
    expect(estimate(50)).toBe(443_238_400 - 46_694_400 + 5_836_800);
  });

  test("on onnx a critic of its own trunk adds that trunk's activations; one on the policy's trunk adds none", () => {
    // The estimator `gae` reads critic values (AdvantageEstimator.inputs); the engine is onnx.
    const roles = {
      namesOf: () => ['onnx'],
      getNamed: (token: unknown) => (token === BackendFactory ? onnxBackendFactory : { name: 'gae', inputs: ['values'] }),
    } as never;
    const perToken = (critic: Record<string, unknown>) => {
      const cfg = config({
        models: { policy: { backend: 'onnx', model: 'tiny', runtime: 'auto' } },
        agents: { answerer: {} },
        algorithm: { advantage: 'gae' },
        critic,
      });
      const limits = agentLimits(cfg, agents({ answerer: 100 }), roles);
      return estimateEpisodeMemory(limits, { count: 8, why: 'p x s' }, { turns: 1, loops: 1 }).arithmetic;
    };
    // The tiny policy's 58,368 bytes of activations per token (the test above) and as much again for a tiny critic:
    // 4,096 + 2 x 58,368 = 120,832 bytes per token.
    expect(perToken({ learner: 'ppo' })).toContain(
      "120,832 bytes per token (4,096 of model policy's key/value cache + 116,736 of model policy's activations kept for the backward pass on onnx, its critic's included",
    );
    expect(perToken({ learner: 'ppo', shareTrunk: true })).toContain('62,464 bytes per token');
  });

  test('a budget below the estimate is LIMIT_EXCEEDED naming the larger of prompts and samples', () => {
    const cfg = config({
      models: { policy: { backend: 'tfjs', model: qwenDir, runtime: 'auto' } },
      // 8 x 4 evaluation rows, fewer than the 128 of a training step.
      eval: { every: 0, atEnd: true, atStart: false, k: 4, tasks: 0, tasksPerBatch: 8 },
    });
    const limits = agentLimits(cfg, agents({ answerer: 512 }));
    // orchestra.maxLoops 2: a round's last call holds 2 x 512 tokens; 128 rows x 1,024 x 24,576 + 128 rows x 8 turns
    // x 512 x 64 = 3,221,225,472 + 33,554,432 = 3,254,779,904 bytes.
    expect(() => checkMemory(cfg, limits, 8, { bytes: 3_254_779_904, description: 'exactly enough' })).not.toThrow();
    expect(() => checkMemory(cfg, limits, 8, { bytes: 3_254_779_903, description: 'one byte short' })).toThrow(
      expect.objectContaining({ code: 'LIMIT_EXCEEDED', key: 'rollout.promptsPerStep' }),
    );
    const manySamples = config({ ...cfg, rollout: { promptsPerStep: 2, samplesPerPrompt: 64 } });
    expect(() => checkMemory(manySamples, limits, 8, { bytes: 1e6, description: 'small' })).toThrow(
      expect.objectContaining({ key: 'rollout.samplesPerPrompt' }),
    );
  });

  test('evaluation batches are checked too: eval.tasksPerBatch x eval.k rows', () => {
    const cfg = config({
      models: { policy: { backend: 'tfjs', model: 'tiny', runtime: 'auto' } },
      rollout: { promptsPerStep: 1, samplesPerPrompt: 1 },
      eval: { every: 0, atEnd: true, atStart: false, k: 1024, tasks: 0, tasksPerBatch: 16 },
      orchestra: { name: 'search', maxLoops: 1 },
    });
    const limits = agentLimits(cfg, agents({ answerer: 100 }));
    // tiny: 2 x 4 layers x 2 heads x 64 x 4 = 4,096 bytes; 16 x 1,024 rows x 100 x (4,096 + 64) = 6,815,744,000 bytes.
    expect(() => checkMemory(cfg, limits, 1, { bytes: 6_815_744_000, description: 'enough' })).not.toThrow();
    expect(() => checkMemory(cfg, limits, 1, { bytes: 6_815_743_999, description: 'short' })).toThrow(
      expect.objectContaining({
        code: 'LIMIT_EXCEEDED',
        key: 'eval.k',
        message: expect.stringContaining('16,384 rows (eval.tasksPerBatch 16 x eval.k 1,024)'),
      }),
    );
  });

  test("maxNewTokens must leave the prompt room within the model's positions", () => {
    const cfg = config({ models: { policy: { backend: 'tfjs', model: qwenDir, runtime: 'auto' } } });
    expect(() => checkPositions(agentLimits(cfg, agents({ answerer: 32767 })))).not.toThrow();
    expect(() => checkPositions(agentLimits(cfg, agents({ answerer: 32768 })))).toThrow(
      expect.objectContaining({ code: 'LIMIT_EXCEEDED', key: 'agents.answerer.sampling.maxNewTokens' }),
    );
    // A model folder without a config.json is left to the model loader to report.
    const unknown = config({ models: { policy: { backend: 'tfjs', model: project.path('nowhere'), runtime: 'auto' } } });
    expect(() => checkPositions(agentLimits(unknown, agents({ answerer: 10 ** 6 })))).not.toThrow();
  });

  test('agents the orchestra lacks are typos, unless a preset set them', () => {
    const orchestra = createMathOrchestra();
    const cfg = config({ agents: { solver: {}, solvr: {}, planner: {} } });
    const origins: Record<string, string> = { 'agents.solvr': '/p/drmas.config.json', 'agents.planner': 'preset plan' };
    expect(() => checkAgentRoles(cfg, orchestra, (key) => origins[key])).toThrow(
      expect.objectContaining({
        key: 'agents.solvr',
        message: 'unknown agent role solvr in agents; the orchestra math has solver, verifier. Did you mean "solver"?',
      }),
    );
    delete origins['agents.solvr'];
    const presetOnly = config({ agents: { solver: {}, planner: {} } });
    expect(() => checkAgentRoles(presetOnly, orchestra, (key) => origins[key])).not.toThrow();
  });
});
