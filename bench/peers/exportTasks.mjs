// The peer benchmark's inputs, exported from drmas's built packages so that TRL trains on exactly what drmas does:
// the model as a Hugging Face folder transformers loads, and each training step's tasks with the Solver's prompt
// rendered as drmas renders it (its template, then the tokenizer's chat template).
// usage: node bench/peers/exportTasks.mjs --model tiny|small|qwen2.5-0.5b --seed N --steps N --config FILE --out DIR
// Writes DIR/model/ (PEER_MODELS says what each model is) and DIR/tasks.jsonl, one line per task of each step:
// { step, index, taskId, question, answer, split, prompt, promptTokens }.
import { mkdirSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createKernel, Environment } from '@drmas/core';
import { builtinConfigJson, builtinModel, saveCheckpoint, Tokenizer } from '@drmas/models';
import { PromptedAgent } from '@drmas/plugin-orchestra';
import { BASE_CHECKPOINT } from '@drmas/preset-math';
import { REPO_ROOT } from '../lib/benchOptions.mjs';
import { writePublishedCheckpoint } from '../sizes/randomCheckpoint.mjs';

/**
 * A random checkpoint earns one reward on every response, so every advantage is zero: drmas skips the backward of a
 * row without advantage, TRL runs it. An entropy bonus gives every row a gradient, so that drmas runs the backward
 * of all of them too (and the entropy's pass over the vocabulary besides; TRL's GRPO loss has no entropy term).
 */
export const EVERY_ROW_TRAINS = ['algorithm.loss.entropyCoef=0.001'];

/**
 * The models the benchmark compares on: where each one's weights come from, how its folder is written, and whether
 * its weights are random (its rows then measure speed and memory, and drmas's runs take `EVERY_ROW_TRAINS`).
 */
export const PEER_MODELS = {
  tiny: {
    describe: "the math preset's base checkpoint (tiny after its supervised warm-up, bf16)",
    write: async (target) => symlinkSync(BASE_CHECKPOINT, target),
  },
  small: {
    describe: "the built-in small model's seeded initialization (float32), written by drmas's checkpoint writer",
    write: async (target, seed) => {
      const { weights, tokenizer } = builtinModel('small', { seed });
      await saveCheckpoint(target, { config: builtinConfigJson('small', 'Qwen2ForCausalLM', tokenizer), tensors: weights, tokenizer });
    },
    random: true,
  },
  'qwen2.5-0.5b': {
    describe:
      "a seeded random checkpoint of Qwen2.5-0.5B-Instruct's published config (bf16, the real Qwen tokenizer), written by bench/sizes/randomCheckpoint.mjs",
    write: (target, seed) => writePublishedCheckpoint('Qwen2.5-0.5B', target, { seed }),
    random: true,
  },
};

/** The overrides of drmas's config of the runs on `model` (written at `modelDir`) with `seed`. */
export function runOverrides(model, modelDir, seed) {
  return [
    `models.policy.model=${modelDir}`,
    `env.seed=${seed}`,
    `trainer.seed=${seed}`,
    ...(PEER_MODELS[model].random ? EVERY_ROW_TRAINS : []),
  ];
}

/** Writes the model folder for `name` under `dir` (seeded where its weights are drawn); returns its path. */
export async function exportModel(name, dir, seed) {
  const target = join(dir, 'model');
  if (existsSync(join(target, 'config.json'))) return target;
  const model = PEER_MODELS[name];
  if (!model) throw new Error(`bench/peers: no model "${name}" (known: ${Object.keys(PEER_MODELS).join(', ')})`);
  mkdirSync(dir, { recursive: true });
  await model.write(target, seed);
  return target;
}

/**
 * The tasks of steps 1..steps as drmas's orchestra draws them (`Environment.batch` from cursor 0, promptsPerStep at a
 * time) under `config`, each with the Solver's first prompt as drmas formats it for `modelDir`'s tokenizer.
 */
export async function exportTasks({ config, overrides, steps, modelDir }) {
  const { kernel, config: resolved } = await createKernel({ cwd: REPO_ROOT, configPath: config, overrides });
  const environment = kernel.getNamed(Environment, resolved.env.name);
  await environment.init();
  const tokenizer = await Tokenizer.fromDirectory(modelDir);
  if (!tokenizer) throw new Error(`bench/peers: ${modelDir} has no tokenizer files`);
  const solver = new PromptedAgent({ role: 'solver', tag: 'boxed', ...resolved.agents.solver });
  const perStep = resolved.rollout.promptsPerStep;
  const lines = [];
  let cursor = 0;
  for (let step = 1; step <= steps; step++) {
    await environment.prepare?.(cursor, perStep);
    const { tasks, nextCursor } = environment.batch(cursor, perStep);
    cursor = nextCursor;
    tasks.forEach((task, index) => {
      const prompt = solver.format(
        solver.prompt({ question: task.question, observation: task.question, team_context: '' }),
        tokenizer,
      ).text;
      const { id: taskId, question, answer, split } = task;
      lines.push({ step, index, taskId, question, answer, split, prompt, promptTokens: tokenizer.encode(prompt).length });
    });
  }
  return lines;
}

async function main() {
  const { values } = parseArgs({
    options: {
      model: { type: 'string', default: 'tiny' },
      seed: { type: 'string', default: '0' },
      steps: { type: 'string', default: '10' },
      config: { type: 'string', default: 'bench/peers/grpo.json' },
      set: { type: 'string', multiple: true, default: [] },
      out: { type: 'string' },
    },
    strict: true,
  });
  if (!values.out) throw new Error('bench/peers/exportTasks.mjs: --out DIR is required');
  const out = resolve(values.out);
  const seed = Number(values.seed);
  const modelDir = await exportModel(values.model, out, seed);
  const overrides = [...runOverrides(values.model, modelDir, seed), ...values.set];
  const lines = await exportTasks({ config: values.config, overrides, steps: Number(values.steps), modelDir });
  writeFileSync(join(out, 'tasks.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  console.log(JSON.stringify({ modelDir, tasks: lines.length, file: join(out, 'tasks.jsonl') }));
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
