/**
 * transformers and PEFT (scripts/python/peers.txt) on checkpoints drmas writes, and drmas on checkpoints transformers
 * writes, for random models with the published configurations of the five models of issue 43 (Qwen2.5-0.5B and
 * 1.5B, Qwen3-0.6B and 1.7B, Llama-3.2-1B; two layers each, every other key as published): a full checkpoint loads
 * with `AutoModelForCausalLM.from_pretrained`, and a LoRA adapter in PEFT's layout (random, and one `drmas sft`
 * trained) with `PeftModel.from_pretrained`; all give drmas's log-probs (`drmas score`, on onnx and, where it runs,
 * tfjs; an adapter merged as PEFT's `merge_and_unload`) within 1e-4; the bf16 checkpoint transformers saves from the
 * model (sharded, with its index json) loads in drmas and scores as transformers scores it.
 */
import { afterAll, expect, test } from '@jest/globals';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { LoraSettings } from '@drmas/core';
import {
  loadLoraAdapter,
  loraAdapterFiles,
  loraTensorShapes,
  mergeLoraAdapter,
  parseModelConfig,
  randomInitWeights,
  saveCheckpoint,
} from '@drmas/models';
import { describeInterop } from '../support/interopSuite.js';
import { cutDown, PUBLISHED_MODELS } from '../support/publishedConfigs.js';
import { runNode } from '../support/cliRunner.js';
import { REPO_ROOT, TempProject } from '../support/tempProject.js';
import { runPython } from './support.js';

/** The published config.json of each model (test/support/publishedConfigs.ts), with two layers. */
const CONFIGS: Record<string, Record<string, unknown>> = Object.fromEntries(
  Object.entries(PUBLISHED_MODELS).map(([name, model]) => [name, cutDown(model.config, 2)]),
);

/** LoRA settings per model: PEFT's default targets on two, every module on the third. */
const ALL_MODULES: LoraSettings['targetModules'] = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'];
const LORA: Record<string, LoraSettings> = {
  'Llama-3.2-1B': { rank: 8, alpha: 16, dropout: 0, targetModules: ['q_proj', 'v_proj'] },
  'Qwen2.5-0.5B': { rank: 4, alpha: 8, dropout: 0, targetModules: ALL_MODULES },
  'Qwen2.5-1.5B': { rank: 16, alpha: 32, dropout: 0, targetModules: ALL_MODULES },
  'Qwen3-0.6B': { rank: 8, alpha: 32, dropout: 0, targetModules: ['q_proj', 'v_proj'] },
  'Qwen3-1.7B': { rank: 16, alpha: 32, dropout: 0, targetModules: ALL_MODULES },
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
  'Qwen2.5-1.5B': ['onnx'],
  'Qwen3-0.6B': ['onnx', 'tfjs'],
  // onnx, the engine training picks; tfjs was not tried at these widths.
  'Qwen3-1.7B': ['onnx'],
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

/**
 * The adapter `drmas sft` trains on `base` (one optimizer step over two demonstrations, at a rate that moves B well
 * off zero) for the Solver, with `settings`: the folder `--out` writes, in PEFT's layout.
 */
function trainAdapter(name: string, base: string, settings: LoraSettings): string {
  const dir = scratch.path(name, 'sft');
  mkdirSync(dir, { recursive: true });
  const lora = { rank: settings.rank, alpha: settings.alpha, targetModules: settings.targetModules };
  writeFileSync(
    path.join(dir, 'drmas.config.json'),
    JSON.stringify({
      presets: ['math'],
      models: { policy: { model: base, backend: 'onnx', optimizer: { paramGroups: [] } } },
      agents: { solver: { lora }, verifier: { lora } },
    }),
  );
  writeFileSync(
    path.join(dir, 'demos.jsonl'),
    ['What is 2 + 3?', 'What is 7 * 6?']
      .map((prompt, i) => JSON.stringify({ agent: 'solver', prompt, response: `\\boxed{${[5, 42][i]}}` }))
      .join('\n'),
  );
  const out = path.join(dir, 'out');
  const args = ['sft', '--config', 'drmas.config.json', '--data', 'demos.jsonl', '--epochs', '1', '--batch-size', '2', '--lr', '0.02'];
  const result = runNode([path.join(REPO_ROOT, 'core', 'bin', 'drmas.js'), ...args, '--warmup-steps', '0', '--out', out], dir, 600_000);
  if (result.code !== 0) throw new Error(`drmas sft exited ${result.code}:\n${result.stderr.slice(-3000)}`);
  return path.join(out, 'policy@solver');
}

/** The largest |a - b| over two equal-length lists. */
function maxDifference(a: number[], b: number[]): number {
  expect(a).toHaveLength(b.length);
  return Math.max(...a.map((x, i) => Math.abs(x - b[i]!)));
}

/** Each model's full checkpoint, the ids scored and transformers' log-probs, for the known failure below. */
const scored = new Map<string, { base: string; ids: number[]; promptLength: number; expected: number[] }>();

/**
 * Frees what `name`'s check wrote (five models' folders together passed a CI machine's free disk), keeping the full
 * checkpoint the known failure below scores.
 */
function releaseDisk(name: string): void {
  const dir = scratch.path(name);
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir)) {
    if (!(entry === 'base' && name === 'Llama-3.2-1B')) rmSync(path.join(dir, entry), { recursive: true, force: true });
  }
}

/**
 * One model's round trip (the test below): its folder under the scratch project holds a full checkpoint, two merged
 * ones, transformers' bf16 shards and an sft run, several GB at the published vocabularies.
 */
async function checkModel(name: string, raw: Record<string, unknown>, python: string): Promise<void> {
  const config = parseModelConfig(raw);
  const weights = randomInitWeights(config, 7);
  const base = scratch.path(name, 'base');
  await saveCheckpoint(base, { config: raw, tensors: weights, tokenizerDir: PUBLISHED_MODELS[name]!.tokenizerDir });

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

  // An adapter drmas trained: one LoRA step of `drmas sft` (PEFT's init, then AdamW moves B off zero).
  const trained = trainAdapter(name, base, LORA[name]!);
  const trainedMerged = scratch.path(name, 'trained-merged');
  await saveCheckpoint(trainedMerged, {
    config: raw,
    tensors: mergeLoraAdapter(config, weights, await loadLoraAdapter(trained, config)),
  });

  const ids = Array.from({ length: 24 }, (_, i) => (i * 7919 + 13) % config.vocabSize);
  const promptLength = 4;
  const bf16 = scratch.path(name, 'bf16-by-transformers');
  const job = scratch.path(name, 'job.json');
  writeFileSync(job, JSON.stringify({ model: base, adapters: [adapterDir, trained], ids, promptLength, saveBf16: bf16 }));
  const theirs = runPython<{ base: number[]; adapters: number[][]; bf16: number[]; bf16Files: string[] }>(python, 'transformers_score.py', [
    job,
  ]);

  expect(theirs.bf16Files).toContain('model.safetensors.index.json');
  expect(theirs.bf16Files.filter((file) => /^model-\d+-of-\d+\.safetensors$/.test(file)).length).toBeGreaterThan(1);
  // The adapter changes the model, so agreeing on it is not agreeing on the base again.
  expect(maxDifference(theirs.adapters[0]!, theirs.base)).toBeGreaterThan(100 * TOLERANCE);
  expect(maxDifference(theirs.adapters[1]!, theirs.base)).toBeGreaterThan(100 * TOLERANCE);
  const cases: Array<[string, string, number[]]> = [
    ['full checkpoint', base, theirs.base],
    ['LoRA adapter (merged by drmas, PeftModel in transformers)', merged, theirs.adapters[0]!],
    ["transformers' bf16 shards", bf16, theirs.bf16],
    ['LoRA adapter trained by drmas sft (merged by drmas, PeftModel in transformers)', trainedMerged, theirs.adapters[1]!],
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
}

describeInterop('transformers and PEFT', 'peers', (python) => {
  for (const [name, raw] of Object.entries(CONFIGS)) {
    test(`${name}: drmas's checkpoint and LoRA adapter in transformers and PEFT, transformers' bf16 shards in drmas`, async () => {
      try {
        await checkModel(name, raw, python);
      } finally {
        releaseDisk(name);
      }
    });
  }

  // Known failure (see ENGINES): once tfjs scores Llama-3.2-1B's shapes right, this passes, and so fails here.
  test.failing("Llama-3.2-1B on tfjs's default runtime (wasm) scores as transformers (known to fail: uniform log-probs)", () => {
    const { base, ids, promptLength, expected } = scored.get('Llama-3.2-1B')!;
    expect(maxDifference(drmasScore(base, ids, promptLength, 'tfjs'), expected)).toBeLessThan(TOLERANCE);
  });
});
