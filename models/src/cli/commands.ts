import {
  CONFIG_HELP,
  CONFIG_OPTIONS,
  DrmasError,
  integerOption,
  numberOption,
  type CliCommand,
  type CliIO,
  type DrmasErrorCode,
} from '@drmas/core';
import { generateCommand } from './generateCommand.js';
import { scoreCommand } from './scoreCommand.js';
import { formatValidateReport, validateConfig } from './validateCommand.js';
import type { ArchitectureName } from '../config/ModelConfig.js';

/** Upper bound of a generated length from the command line: far above what a CPU model writes in one call. */
const MAX_NEW_TOKENS = 1_000_000;
const SEED = { min: 0, max: 2 ** 32 - 1, example: 0 };

function ids(text: string, key: string): number[] {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  const parsed = parts.map(Number);
  const bad = parts.find((p, i) => !Number.isInteger(parsed[i]));
  if (bad !== undefined || parts.length === 0) {
    throw new DrmasError('INVALID_ARGUMENT', `--${key} expects comma-separated token ids, got "${text}"`, {
      key: `--${key}`,
      hint: `e.g. --${key} 1,2,3`,
    });
  }
  return parsed;
}

const FLAG_AT_FAULT: Partial<Record<DrmasErrorCode, string>> = {
  CHECKPOINT_INVALID: '--model',
  TOKENIZER_INVALID: '--model',
  RUNTIME_UNAVAILABLE: '--runtime',
};

/** Errors of the model or runtime a command opened, located at the flag that chose it (unless they name one already). */
async function atFlags<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const flag = DrmasError.is(error) && !error.key?.startsWith('--') ? FLAG_AT_FAULT[error.code] : undefined;
    throw flag ? (error as DrmasError).at(flag) : error;
  }
}

const MODEL_HELP: [string, string] = [
  '--model DIR|tiny|small',
  'a Hugging Face checkpoint folder (config.json + model.safetensors) or a built-in model',
];
const RUNTIME_HELP: [string, string] = ['--runtime NAME', "the tfjs engine's runtime: auto (default), tfjs-node-gpu, tfjs-node, wasm, cpu"];
const ENGINE_HELP: [string, string] = [
  '--engine NAME',
  'onnx or tfjs (each where its package @drmas/plugin-backend-<NAME> is installed): the same checkpoint on either; default auto, as training: onnx where onnxruntime-node loads, else tfjs',
];

/** Where a command's engine is looked up, and where it says which engines it passed over. */
function engineContext(io: CliIO): { cwd: string; log: (message: string) => void } {
  return { cwd: io.cwd, log: (message) => io.stderr.write(`drmas: ${message}\n`) };
}

export const generate: CliCommand = {
  name: 'generate',
  summary: 'sample a continuation from a model, streaming tokens',
  usage:
    'drmas generate --model DIR|tiny --prompt TEXT [--max-new-tokens N] [--temperature T] [--top-p P] [--top-k K] [--seed S] [--engine auto|onnx|tfjs]',
  help: [
    MODEL_HELP,
    ['--prompt TEXT', "the prompt (needs the checkpoint's tokenizer)"],
    ['--prompt-ids 1,2,3', 'the prompt as token ids (for checkpoints without a tokenizer)'],
    ['--chat', "wrap the prompt as a user message with the tokenizer's chat template"],
    ['--max-new-tokens N', 'default 64'],
    ['--temperature T', 'default 1; 0 is greedy'],
    ['--top-p P', 'default 1'],
    ['--top-k K', 'default 0 (off)'],
    ['--seed S', "sampling seed (and a built-in model's initialisation seed)"],
    ['--architecture A', 'architecture of a built-in model'],
    RUNTIME_HELP,
    ENGINE_HELP,
  ],
  options: {
    model: { type: 'string' },
    prompt: { type: 'string' },
    'prompt-ids': { type: 'string' },
    chat: { type: 'boolean' },
    'max-new-tokens': { type: 'string' },
    temperature: { type: 'string' },
    'top-p': { type: 'string' },
    'top-k': { type: 'string' },
    seed: { type: 'string' },
    architecture: { type: 'string' },
    runtime: { type: 'string' },
    engine: { type: 'string' },
  },
  async run({ values }, io) {
    if (!values.model) throw new DrmasError('INVALID_ARGUMENT', '--model is required', { key: '--model', hint: 'e.g. --model tiny' });
    if (!values.prompt && !values['prompt-ids'])
      throw new DrmasError('INVALID_ARGUMENT', 'give --prompt TEXT or --prompt-ids 1,2,3', { key: '--prompt' });
    await atFlags(() =>
      generateCommand(
        {
          model: values.model as string,
          prompt: values.prompt as string | undefined,
          promptIds: values['prompt-ids'] ? ids(values['prompt-ids'] as string, 'prompt-ids') : undefined,
          chat: values.chat as boolean | undefined,
          maxNewTokens: integerOption(values, 'max-new-tokens', { min: 1, max: MAX_NEW_TOKENS, example: 64 }),
          temperature: numberOption(values, 'temperature', { min: 0, example: 0.7 }),
          topP: numberOption(values, 'top-p', { min: 0, exclusiveMin: true, max: 1, example: 0.95 }),
          topK: integerOption(values, 'top-k', { min: 0, max: 2 ** 31 - 1, example: 50 }),
          seed: integerOption(values, 'seed', SEED),
          architecture: values.architecture as ArchitectureName | undefined,
          runtime: values.runtime as string | undefined,
          engine: values.engine as string | undefined,
          ...engineContext(io),
        },
        io.stdout as NodeJS.WritableStream & import('node:stream').Writable,
      ),
    );
    io.stdout.write('\n');
    return 0;
  },
};

export const score: CliCommand = {
  name: 'score',
  summary: 'print the log-prob of each token id after its prefix',
  usage: 'drmas score --model DIR|tiny --ids 1,2,3 [--prompt-length N] [--json] [--engine auto|onnx|tfjs]',
  help: [
    MODEL_HELP,
    ['--ids 1,2,3', 'the token ids'],
    ['--prompt-length N', 'ids before position N are context only (null); default 1'],
    ['--json', 'print {"logprobs": [null, -2.1, ...]}'],
    ['--seed S', 'initialisation seed of a built-in model'],
    RUNTIME_HELP,
    ENGINE_HELP,
  ],
  options: {
    model: { type: 'string' },
    ids: { type: 'string' },
    'prompt-length': { type: 'string' },
    json: { type: 'boolean' },
    seed: { type: 'string' },
    runtime: { type: 'string' },
    engine: { type: 'string' },
  },
  async run({ values }, io) {
    if (!values.model) throw new DrmasError('INVALID_ARGUMENT', '--model is required', { key: '--model', hint: 'e.g. --model tiny' });
    if (!values.ids) throw new DrmasError('INVALID_ARGUMENT', '--ids is required', { key: '--ids', hint: 'e.g. --ids 1,2,3' });
    await atFlags(() =>
      scoreCommand(
        {
          model: values.model as string,
          ids: ids(values.ids as string, 'ids'),
          promptLength: integerOption(values, 'prompt-length', { min: 1, max: 2 ** 31 - 1, example: 1 }),
          json: values.json as boolean | undefined,
          seed: integerOption(values, 'seed', SEED),
          runtime: values.runtime as string | undefined,
          engine: values.engine as string | undefined,
          ...engineContext(io),
        },
        io.stdout as NodeJS.WritableStream & import('node:stream').Writable,
      ),
    );
    return 0;
  },
};

export const validate: CliCommand = {
  name: 'validate',
  summary: 'check a config and its model folders (config.json, weight shapes, tokenizer, chat template) without loading weights',
  usage: 'drmas validate [--config PATH] [--set KEY=VALUE ...] [--json]',
  help: [...CONFIG_HELP, ['--json', 'print the report as JSON']],
  options: { ...CONFIG_OPTIONS, json: { type: 'boolean' } },
  async run({ values }, io) {
    const report = await validateConfig({
      cwd: io.cwd,
      configPath: values.config as string | undefined,
      overrides: values.set as string[] | undefined,
    });
    io.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatValidateReport(report));
    return 0;
  },
};
