/**
 * transformers and PEFT (scripts/python/peers.txt) on checkpoints drmas writes, and drmas on checkpoints transformers
 * writes, for random models with the published configurations of Llama-3.2-1B, Qwen2.5-0.5B and Qwen3-0.6B (two
 * layers each, every other shape as published): a full checkpoint loads with `AutoModelForCausalLM.from_pretrained`
 * and a LoRA adapter in PEFT's layout with `PeftModel.from_pretrained`, and both give drmas's log-probs (`drmas score`,
 * on onnx and on tfjs; the adapter merged as PEFT's `merge_and_unload`) within 1e-4; the bf16 checkpoint transformers
 * saves from the model (sharded, with its index json) loads in drmas and scores as transformers scores it.
 */
import { afterAll, expect, test } from '@jest/globals';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { LoraSettings } from '@drmas/core';
import { loraAdapterFiles, loraTensorShapes, mergeLoraAdapter, parseModelConfig, randomInitWeights, saveCheckpoint } from '@drmas/models';
import { describeInterop } from '../support/interopSuite.js';
import { runNode } from '../support/cliRunner.js';
import { REPO_ROOT, TempProject } from '../support/tempProject.js';
import { runPython } from './support.js';

/** The published config.json of each model, with two layers. */
const CONFIGS: Record<string, Record<string, unknown>> = {
  'Llama-3.2-1B': {
    architectures: ['LlamaForCausalLM'],
    attention_bias: false,
    attention_dropout: 0.0,
    bos_token_id: 128000,
    eos_token_id: 128001,
    head_dim: 64,
    hidden_act: 'silu',
    hidden_size: 2048,
    initializer_range: 0.02,
    intermediate_size: 8192,
    max_position_embeddings: 131072,
    mlp_bias: false,
    model_type: 'llama',
    num_attention_heads: 32,
    num_hidden_layers: 2,
    num_key_value_heads: 8,
    pretraining_tp: 1,
    rms_norm_eps: 1e-5,
    rope_scaling: {
      factor: 32.0,
      high_freq_factor: 4.0,
      low_freq_factor: 1.0,
      original_max_position_embeddings: 8192,
      rope_type: 'llama3',
    },
    rope_theta: 500000.0,
    tie_word_embeddings: true,
    torch_dtype: 'bfloat16',
    use_cache: true,
    vocab_size: 128256,
  },
  'Qwen2.5-0.5B': {
    architectures: ['Qwen2ForCausalLM'],
    attention_dropout: 0.0,
    bos_token_id: 151643,
    eos_token_id: 151643,
    hidden_act: 'silu',
    hidden_size: 896,
    initializer_range: 0.02,
    intermediate_size: 4864,
    max_position_embeddings: 32768,
    max_window_layers: 24,
    model_type: 'qwen2',
    num_attention_heads: 14,
    num_hidden_layers: 2,
    num_key_value_heads: 2,
    rms_norm_eps: 1e-6,
    rope_theta: 1000000.0,
    sliding_window: 32768,
    tie_word_embeddings: true,
    torch_dtype: 'bfloat16',
    use_cache: true,
    use_sliding_window: false,
    vocab_size: 151936,
  },
  'Qwen3-0.6B': {
    architectures: ['Qwen3ForCausalLM'],
    attention_bias: false,
    attention_dropout: 0.0,
    bos_token_id: 151643,
    eos_token_id: 151645,
    head_dim: 128,
    hidden_act: 'silu',
    hidden_size: 1024,
    initializer_range: 0.02,
    intermediate_size: 3072,
    max_position_embeddings: 40960,
    max_window_layers: 28,
    model_type: 'qwen3',
    num_attention_heads: 16,
    num_hidden_layers: 2,
    num_key_value_heads: 8,
    rms_norm_eps: 1e-6,
    rope_scaling: null,
    rope_theta: 1000000,
    sliding_window: null,
    tie_word_embeddings: true,
    torch_dtype: 'bfloat16',
    use_cache: true,
    use_sliding_window: false,
    vocab_size: 151936,
  },
};

/** LoRA settings per model: PEFT's default targets on two, every module on the third. */
const LORA: Record<string, LoraSettings> = {
  'Llama-3.2-1B': { rank: 8, alpha: 16, dropout: 0, targetModules: ['q_proj', 'v_proj'] },
  'Qwen2.5-0.5B': {
    rank: 4,
    alpha: 8,
    dropout: 0,
    targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
  },
  'Qwen3-0.6B': { rank: 8, alpha: 32, dropout: 0, targetModules: ['q_proj', 'v_proj'] },
};

/**
 * The engines each model is scored on. tfjs's wasm runtime (the one it runs on without tfjs-node) gives Llama-3.2-1B's
 * shapes a uniform distribution, every log-prob -ln(128256), silently: its [128256, 2048] embedding (1 GiB) breaks
 * tfjs-backend-wasm 4.22 (a bare matMul on such a tensor aborts). Its cpu runtime is right (-12.3507 where onnx and
 * transformers give -12.3507) but takes minutes here, so tfjs on Llama is the known failure below.
 */
const ENGINES: Record<string, Array<'onnx' | 'tfjs'>> = {
  'Llama-3.2-1B': ['onnx'],
  'Qwen2.5-0.5B': ['onnx', 'tfjs'],
  'Qwen3-0.6B': ['onnx', 'tfjs'],
};

const TOLERANCE = 1e-4;
const scratch = new TempProject('interop-transformers');
afterAll(() => scratch.dispose());

/** `drmas score` (the built CLI, in a child process) on `model` with `engine`: the log-probs from `promptLength` on. */
function drmasScore(model: string, ids: number[], promptLength: number, engine: 'onnx' | 'tfjs'): number[] {
  const result = runNode(
    [
      path.join(REPO_ROOT, 'core', 'bin', 'drmas.js'),
      'score',
      '--model',
      model,
      '--ids',
      ids.join(','),
      '--prompt-length',
      String(promptLength),
      '--json',
      '--engine',
      engine,
    ],
    REPO_ROOT,
    600_000,
  );
  if (result.code !== 0) throw new Error(`drmas score --engine ${engine} exited ${result.code}:\n${result.stderr.slice(-3000)}`);
  return (JSON.parse(result.stdout) as { logprobs: Array<number | null> }).logprobs.slice(promptLength) as number[];
}

/** The largest |a - b| over two equal-length lists. */
function maxDifference(a: number[], b: number[]): number {
  expect(a).toHaveLength(b.length);
  return Math.max(...a.map((x, i) => Math.abs(x - b[i]!)));
}

/** Each model's full checkpoint, the ids scored and transformers' log-probs, for the known failure below. */
const scored = new Map<string, { base: string; ids: number[]; promptLength: number; expected: number[] }>();

describeInterop('transformers and PEFT', 'peers', (python) => {
  for (const [name, raw] of Object.entries(CONFIGS)) {
    test(`${name}: drmas's checkpoint and LoRA adapter in transformers and PEFT, transformers' bf16 shards in drmas`, async () => {
      const config = parseModelConfig(raw);
      const weights = randomInitWeights(config, 7);
      const base = scratch.path(name, 'base');
      await saveCheckpoint(base, { config: raw, tensors: weights });

      // An adapter whose B is not zero (PEFT's init would leave the model unchanged): A and B both random.
      const settings = LORA[name]!;
      let seed = 11;
      const uniform = () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 2 - 1;
      const adapter = new Map(
        [...loraTensorShapes(config, settings)].map(([tensor, shape]) => [
          tensor,
          {
            shape,
            data: Float32Array.from(
              { length: shape[0]! * shape[1]! },
              () => uniform() * (tensor.includes('lora_A') ? 1 / Math.sqrt(shape[1]!) : 0.05),
            ),
          },
        ]),
      );
      const adapterDir = scratch.path(name, 'adapter');
      mkdirSync(adapterDir, { recursive: true });
      for (const [file, content] of Object.entries(loraAdapterFiles(adapterDir, settings, adapter, base))) writeFileSync(file, content);
      const merged = scratch.path(name, 'merged');
      await saveCheckpoint(merged, { config: raw, tensors: mergeLoraAdapter(config, weights, { settings, tensors: adapter }) });

      const ids = Array.from({ length: 24 }, (_, i) => (i * 7919 + 13) % config.vocabSize);
      const promptLength = 4;
      const bf16 = scratch.path(name, 'bf16-by-transformers');
      const job = scratch.path(name, 'job.json');
      writeFileSync(job, JSON.stringify({ model: base, adapters: [adapterDir], ids, promptLength, saveBf16: bf16 }));
      const theirs = runPython<{ base: number[]; adapters: number[][]; bf16: number[]; bf16Files: string[] }>(
        python,
        'transformers_score.py',
        [job],
      );

      expect(theirs.bf16Files).toContain('model.safetensors.index.json');
      expect(theirs.bf16Files.filter((file) => /^model-\d+-of-\d+\.safetensors$/.test(file)).length).toBeGreaterThan(1);
      // The adapter changes the model, so agreeing on it is not agreeing on the base again.
      expect(maxDifference(theirs.adapters[0]!, theirs.base)).toBeGreaterThan(100 * TOLERANCE);
      const cases: Array<[string, string, number[]]> = [
        ['full checkpoint', base, theirs.base],
        ['LoRA adapter (merged by drmas, PeftModel in transformers)', merged, theirs.adapters[0]!],
        ["transformers' bf16 shards", bf16, theirs.bf16],
      ];
      const differences = cases.flatMap(([what, model, expected]) =>
        ENGINES[name]!.map((engine) => ({
          what,
          engine,
          maxDifference: maxDifference(drmasScore(model, ids, promptLength, engine), expected),
        })),
      );
      scored.set(name, { base, ids, promptLength, expected: theirs.base });
      console.log(`interop transformers ${name}: ${JSON.stringify(differences)}`);
      expect(differences.filter((d) => !(d.maxDifference < TOLERANCE))).toEqual([]);
      expect(readdirSync(adapterDir).sort()).toEqual(['adapter_config.json', 'adapter_model.safetensors']);
      expect(existsSync(path.join(bf16, 'config.json'))).toBe(true);
    });
  }

  // Known failure (see ENGINES): once tfjs scores Llama-3.2-1B's shapes right, this passes, and so fails here.
  test.failing("Llama-3.2-1B on tfjs's default runtime (wasm) scores as transformers (known to fail: uniform log-probs)", () => {
    const { base, ids, promptLength, expected } = scored.get('Llama-3.2-1B')!;
    expect(maxDifference(drmasScore(base, ids, promptLength, 'tfjs'), expected)).toBeLessThan(TOLERANCE);
  });
});
