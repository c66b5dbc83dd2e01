/**
 * A tiny Qwen2 checkpoint saved here (BF16 weights, sharded, trained tokenizer with chat template) is loaded by
 * Python safetensors + transformers (test/reference/load_with_transformers.py). Skipped, with a warning, when the
 * Python interpreter ($DRMAS_PYTHON, default /usr/bin/python3) lacks transformers or safetensors.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { saveCheckpoint } from '../src/checkpoint/checkpointDirectory.js';
import { loadCheckpoint } from '../src/checkpoint/checkpointDirectory.js';
import type { TensorInput } from '../src/checkpoint/safetensors.js';
import { trainByteLevelBpe } from '../src/tokenizer/trainByteLevelBpe.js';

const PYTHON = process.env.DRMAS_PYTHON ?? '/usr/bin/python3';
const script = join(dirname(fileURLToPath(import.meta.url)), 'reference', 'load_with_transformers.py');
const probe = spawnSync(PYTHON, ['-c', 'import transformers, safetensors, torch'], { encoding: 'utf8' });
if (probe.status !== 0) {
  console.warn(`checkpointTransformers test skipped: ${PYTHON} cannot import transformers, safetensors and torch (set DRMAS_PYTHON)`);
}
const pythonTest = probe.status === 0 ? test : test.skip;

const config = {
  architectures: ['Qwen2ForCausalLM'],
  model_type: 'qwen2',
  vocab_size: 320,
  hidden_size: 8,
  intermediate_size: 16,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  max_position_embeddings: 64,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
  tie_word_embeddings: true,
  torch_dtype: 'bfloat16',
};

function weights(): Map<string, TensorInput> {
  let seed = 1;
  const random = (n: number) =>
    Float32Array.from({ length: n }, () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647 - 0.5;
    });
  const shapes: Record<string, number[]> = {
    'model.embed_tokens.weight': [320, 8],
    'model.layers.0.self_attn.q_proj.weight': [8, 8],
    'model.layers.0.self_attn.q_proj.bias': [8],
    'model.layers.0.self_attn.k_proj.weight': [4, 8],
    'model.layers.0.self_attn.k_proj.bias': [4],
    'model.layers.0.self_attn.v_proj.weight': [4, 8],
    'model.layers.0.self_attn.v_proj.bias': [4],
    'model.layers.0.self_attn.o_proj.weight': [8, 8],
    'model.layers.0.mlp.gate_proj.weight': [16, 8],
    'model.layers.0.mlp.up_proj.weight': [16, 8],
    'model.layers.0.mlp.down_proj.weight': [8, 16],
    'model.layers.0.input_layernorm.weight': [8],
    'model.layers.0.post_attention_layernorm.weight': [8],
    'model.norm.weight': [8],
  };
  return new Map(Object.entries(shapes).map(([name, shape]) => [name, { shape, data: random(shape.reduce((a, b) => a * b, 1)) }]));
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'drmas-transformers-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

pythonTest(
  'transformers loads the model weights and tokenizer unchanged',
  async () => {
    const ckpt = join(dir, 'tiny-qwen2');
    const tokenizer = trainByteLevelBpe(['the agent said hello to the other agent, and the reward was 1.'], { vocabSize: 320 });
    await saveCheckpoint(ckpt, { config, tensors: weights(), tokenizer, dtype: 'BF16', maxShardSize: 3000 });
    const ours = await loadCheckpoint(ckpt);

    const texts = ['the agent said hi', '<|im_start|>user\nhello 😀<|im_end|>'];
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ];
    const result = spawnSync(PYTHON, [script, ckpt], { input: JSON.stringify({ texts, messages }), encoding: 'utf8', maxBuffer: 64 << 20 });
    if (result.status !== 0) throw new Error(`load_with_transformers.py failed: ${result.stderr}`);
    const py = JSON.parse(result.stdout) as {
      tensors: Record<string, { shape: number[]; dtype: string; sum: number }>;
      model: { missing: string[]; unexpected: string[]; mismatched: string[]; max_abs_diff: number } | null;
      tokenizer: { ids: number[][]; chat: string; eos_token_id: number; pad_token_id: number };
    };
    for (const [name, t] of ours.tensors) {
      const theirs = py.tensors[name];
      if (theirs === undefined) throw new Error(`load_with_transformers.py did not report ${name}`);
      expect(theirs.shape).toEqual(t.shape);
      expect(theirs.dtype).toBe('torch.bfloat16');
      expect(theirs.sum).toBeCloseTo(
        t.data.reduce((a, b) => a + b, 0),
        4,
      );
    }
    if (py.model === null) console.warn('transformers cannot use the installed torch: model loading not checked');
    else expect(py.model).toEqual({ missing: [], unexpected: [], mismatched: [], max_abs_diff: 0 });
    expect(py.tokenizer.ids).toEqual(texts.map((t) => tokenizer.encode(t)));
    expect(py.tokenizer.chat).toBe(tokenizer.applyChatTemplate(messages, { addGenerationPrompt: true }));
    expect(py.tokenizer.eos_token_id).toBe(tokenizer.eosTokenId);
    expect(py.tokenizer.pad_token_id).toBe(tokenizer.padTokenId);
  },
  120_000,
);
