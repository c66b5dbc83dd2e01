/**
 * examples/real-models: each config, copied next to a random checkpoint of its model's published config.json (two
 * layers of heads 8 wide; vocabulary, heads, KV heads, rope, biases, norms and tying as published) as the examples'
 * README says to bring it (the real tokenizer, generation_config.json; one sharded, one fp32), passes `drmas validate`,
 * which reports the model as the published config describes it. The full-size folders behind DRMAS_SLOW_TESTS.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { copyFileSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { createKernel } from '@drmas/core';
import { parseModelConfig, randomInitWeights, saveCheckpoint, type WritableDtype } from '@drmas/models';
import { runBin, runCli } from './support/cliRunner.js';
import { describeSlow } from './support/describeSlow.js';
import { cutDown, PUBLISHED_MODELS, type PublishedModel } from './support/publishedConfigs.js';
import { ONE_QUIET_STEP, setFlags } from './support/runSettings.js';
import { REPO_ROOT, TempProject } from './support/tempProject.js';

const DIR = path.join(REPO_ROOT, 'examples', 'real-models');
const CONFIGS = readdirSync(DIR).filter((name) => name.endsWith('.yaml'));
const scratch = new TempProject('real-models');
afterAll(() => scratch.dispose());

/** The published model an example's `model: ./<folder>` names. */
function modelOf(file: string): PublishedModel {
  const folder = /model: \.\/(\S+)/.exec(readFileSync(path.join(DIR, file), 'utf8'))?.[1];
  const model = Object.values(PUBLISHED_MODELS).find((m) => m.folder === folder);
  if (!model) throw new Error(`${file}: model ./${folder} is none of the published models`);
  return model;
}

/** Weights of `config` counted by hand: embedding, per layer attention (with biases, q/k norms), 2 norms, MLP; final norm. */
function parameterCount(c: Record<string, unknown>): number {
  const [v, h, m, layers, heads, kv] = [
    'vocab_size',
    'hidden_size',
    'intermediate_size',
    'num_hidden_layers',
    'num_attention_heads',
    'num_key_value_heads',
  ].map((key) => c[key] as number);
  const d = (c.head_dim as number | undefined) ?? h! / heads!;
  const qwen2 = c.model_type === 'qwen2';
  const attention =
    h! * heads! * d + 2 * h! * kv! * d + heads! * d * h! + (qwen2 ? heads! * d + 2 * kv! * d : 0) + (c.model_type === 'qwen3' ? 2 * d : 0);
  return v! * h! + layers! * (attention + 2 * h! + 3 * h! * m!) + h!;
}

interface ValidateJson {
  models: Array<{
    id: string;
    folder: { parameters: number; dtypes: string[]; files: number; config: { architecture: string; eosTokenIds: number[] } };
    tokenizer: { chatTemplate: boolean; eos?: string };
  }>;
  memory: Array<{ what: string; bytes: number; arithmetic: string; budget: { bytes: number } }>;
}

/** Copies `file` into `dir` beside a random checkpoint of its model (`config` as given), and runs `drmas validate` on it. */
async function validateExample(
  file: string,
  dir: string,
  config: Record<string, unknown>,
  options: { dtype: WritableDtype; maxShardSize?: number },
) {
  const model = modelOf(file);
  await saveCheckpoint(path.join(dir, model.folder), {
    config,
    tensors: randomInitWeights(parseModelConfig(config), 0),
    generationConfig: model.generationConfig,
    tokenizerDir: model.tokenizerDir,
    ...options,
  });
  copyFileSync(path.join(DIR, file), path.join(dir, file));
  // From the repository root, not the example's folder: the folder is found from the config file.
  const result = await runCli(['validate', '--config', path.join(dir, file), '--json'], REPO_ROOT);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  const report = JSON.parse(result.stdout) as ValidateJson;
  expect(report.models).toHaveLength(1);
  // The memory check's two estimates, for the example's 4 x 4 episodes of 128-token turns (a round's last call: 2
  // loops x a Solver's and a Verifier's 128 tokens), within the budget.
  expect(report.memory.map((m) => m.what)).toEqual(['a training step', 'an evaluation batch']);
  expect(report.memory[0]!.arithmetic).toMatch(
    /^16 rows \(rollout\.promptsPerStep 4 x rollout\.samplesPerPrompt 4\) x 512 tokens \(a round's longest row: orchestra\.maxLoops 2 x \(agents\.solver\.sampling\.maxNewTokens 128 \+ agents\.verifier\.sampling\.maxNewTokens 128\), /,
  );
  for (const estimate of report.memory) expect(estimate.bytes).toBeLessThanOrEqual(estimate.budget.bytes);
  const [policy] = report.models;
  const published = model.config;
  expect(policy!.folder.config.architecture).toBe((published.architectures as string[])[0]);
  expect(policy!.folder.parameters).toBe(parameterCount(config));
  expect(policy!.folder.dtypes).toEqual([options.dtype]);
  // config.json's eos ids, then generation_config.json's: the Instruct turn end and <|endoftext|> / <|eot_id|>.
  expect(policy!.folder.config.eosTokenIds).toEqual([...new Set([published.eos_token_id, model.generationConfig.eos_token_id].flat())]);
  expect(policy!.tokenizer.chatTemplate).toBe(true);
  return policy!;
}

/** The smallest step: 2 prompts x 2 samples, 16 new tokens per turn, no evaluation, no checkpoint or report. */
const ONE_SMALL_STEP = setFlags([
  'rollout.promptsPerStep=2',
  'rollout.samplesPerPrompt=2',
  'agents.solver.sampling.maxNewTokens=16',
  'agents.verifier.sampling.maxNewTokens=16',
  ...ONE_QUIET_STEP,
]);

describe('examples/real-models', () => {
  test('there is one example per published model', () => {
    expect(CONFIGS.map((file) => modelOf(file).folder).sort()).toEqual(
      Object.values(PUBLISHED_MODELS)
        .map((m) => m.folder)
        .sort(),
    );
  });

  CONFIGS.forEach((file, i) => {
    // One sharded (transformers' max_shard_size), one fp32, the others one bf16 file, as save_pretrained writes them.
    const options = { dtype: (i === 1 ? 'F32' : 'BF16') as WritableDtype, maxShardSize: i === 0 ? 2 << 20 : undefined };
    test(`${file} passes drmas validate on a cut-down ${modelOf(file).folder} (${options.dtype}${options.maxShardSize ? ', sharded' : ''})`, async () => {
      const dir = scratch.path(file.replace('.yaml', ''));
      const policy = await validateExample(file, dir, cutDown(modelOf(file).config, 2, 8), options);
      if (options.maxShardSize) expect(policy.folder.files).toBeGreaterThan(1);

      // The preset's optimizer group for its 3M model's final norm (lr 2e-2) is dropped; LoRA examples train adapters.
      const { config } = await createKernel({ cwd: dir, configPath: path.join(dir, file) });
      const optimizer = config.models.policy!.optimizer as { lr: number; paramGroups: unknown[] };
      expect(optimizer.paramGroups).toEqual([]);
      const lora = file.includes('-lora');
      expect(Object.values(config.agents).map((a) => a.lora !== undefined)).toEqual([lora, lora]);
      if (!lora) expect(optimizer.lr).toBe(1e-6);
    });
  });

  test('the Llama-3.2-1B example trains a step with LoRA (llama3 rope scaling, three stop ids, no pad token)', () => {
    const file = 'llama-3.2-1b-instruct-lora.yaml';
    const dir = scratch.path(file.replace('.yaml', ''));
    // The folder written by the validate test above.
    const result = runBin(['train', '--config', file, '--run-dir', 'run', ...ONE_SMALL_STEP], dir, 300_000);
    expect(result.stderr).not.toContain('error');
    expect(result.code).toBe(0);
    const line = JSON.parse(
      readFileSync(path.join(dir, 'run', 'metrics.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .at(-1)!,
    ) as Record<string, number>;
    expect(line['episode/count']).toBe(4);
    expect(
      readdirSync(path.join(dir, 'run', 'checkpoints', 'step-000001'))
        .filter((f) => f.includes('@'))
        .sort(),
    ).toEqual(['policy@solver', 'policy@verifier']);
  }, 300_000);
});

describeSlow('examples/real-models at full size', () => {
  for (const file of CONFIGS) {
    test(`${file} passes drmas validate on a full-size ${modelOf(file).folder}`, async () => {
      const dir = scratch.path(`full-${file.replace('.yaml', '')}`);
      try {
        await validateExample(file, dir, modelOf(file).config, { dtype: 'BF16', maxShardSize: 2 << 30 });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 1_200_000);
  }
});
