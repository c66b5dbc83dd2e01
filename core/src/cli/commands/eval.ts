import { existsSync } from 'node:fs';
import path from 'node:path';
import { resolveConfig } from '../../config/resolveConfig.js';
import { DrmasError } from '../../errors/DrmasError.js';
import { createKernel } from '../../kernel/createKernel.js';
import { CHECKPOINT_STATE_FILE } from '../../checkpoint/checkpointLayout.js';
import { verifyCheckpoint } from '../../checkpoint/verifyCheckpoint.js';
import { CONFIG_HELP, CONFIG_OPTIONS, type CliCommand } from '../CliCommand.js';
import { integerOption } from '../optionValues.js';

/**
 * `--checkpoint DIR` as config overrides: a training checkpoint (with trainer_state.json, verified as `--resume`
 * verifies it) gives each worker group its own model folder; a Hugging Face checkpoint replaces the model of every
 * model id.
 */
async function checkpointOverrides(dir: string, cwd: string, configPath: string | undefined, overrides: string[]): Promise<string[]> {
  if (!existsSync(dir)) {
    throw new DrmasError('INVALID_ARGUMENT', `checkpoint ${dir} does not exist`, {
      key: '--checkpoint',
      hint: 'give a checkpoints/step-NNNNNN folder of a run or a Hugging Face model folder',
    });
  }
  if (existsSync(path.join(dir, CHECKPOINT_STATE_FILE))) {
    return (await verifyCheckpoint(dir)).state.workerGroups.map((id) => `models.${id}.model=${path.join(dir, id)}`);
  }
  if (!existsSync(path.join(dir, 'config.json'))) {
    throw new DrmasError(
      'INVALID_ARGUMENT',
      `${dir} is neither a training checkpoint (${CHECKPOINT_STATE_FILE}) nor a model folder (config.json)`,
      { key: '--checkpoint' },
    );
  }
  // Only the model ids are read here; createKernel resolves the config again and warns about what it finds.
  const { config } = await resolveConfig({ cwd, configPath, overrides, warn: () => {} });
  return Object.keys(config.models).map((id) => `models.${id}.model=${dir}`);
}

/**
 * An error about a key an option travels as (`--k` as `eval.k`, `--episodes` as `eval.tasks`) named by the option the
 * user gave; other errors pass through.
 */
function asOption(error: unknown, options: ReadonlyArray<{ flag: string; value: number; key: string }>): unknown {
  if (!DrmasError.is(error)) return error;
  const option = options.find((o) => error.file === `--set ${o.key}=${o.value}` || (error.key === o.key && error.file === undefined));
  if (!option) return error;
  const prefix = `${option.key}: `;
  const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
  // The hint speaks of the config key; the user gave the option (whose smallest value is 1, not 0).
  const hint = error.hint?.replace(/^(use|set eval\.tasks to)/, `give ${option.flag}`).replace(' (0 takes them all)', '');
  return new DrmasError(
    error.code === 'LIMIT_EXCEEDED' ? 'LIMIT_EXCEEDED' : 'INVALID_ARGUMENT',
    `${option.flag} ${option.value}: ${message}`,
    {
      key: option.flag,
      hint: hint ?? `give ${option.flag} a smaller number`,
      cause: error,
    },
  );
}

export const evalCommand: CliCommand = {
  name: 'eval',
  summary: 'evaluate without training: k samples per held-out task, avg@k and pass@k overall and per data source',
  usage: 'drmas eval [--config PATH] [--checkpoint DIR] [--k 16 | --episodes N] [--set KEY=VALUE ...] [--run-dir DIR] [--json]',
  help: [
    ...CONFIG_HELP,
    ['--checkpoint DIR', "evaluate these weights: a run's checkpoints/step-NNNNNN folder or a Hugging Face model folder"],
    ['--k N', 'samples per task (eval.k)'],
    [
      '--episodes N',
      'environment-level evaluation: N episodes, one on each of the first N held-out tasks (eval.tasks N, eval.k 1); val/avg@1 is the mean outcome',
    ],
    ['--run-dir DIR', 'where to write eval.jsonl and metrics (default <trainer.outputDir>/eval-<time>)'],
    ['--json', 'print the metrics as JSON'],
  ],
  options: {
    ...CONFIG_OPTIONS,
    checkpoint: { type: 'string' },
    k: { type: 'string' },
    episodes: { type: 'string' },
    'run-dir': { type: 'string' },
    json: { type: 'boolean' },
  },
  async run({ values }, io) {
    const configPath = values.config as string | undefined;
    const overrides = [...((values.set as string[] | undefined) ?? [])];
    const k = integerOption(values, 'k', { min: 1, of: 'samples per task', example: 16 });
    const episodes = integerOption(values, 'episodes', { min: 1, of: 'episodes', example: 64 });
    if (k !== undefined && episodes !== undefined)
      throw new DrmasError('INVALID_ARGUMENT', '--episodes runs one episode per held-out task, so it takes no --k', {
        key: '--k',
        hint: 'give --episodes N for N episodes, or --k with eval.tasks for k samples of each task',
      });
    const translated: { flag: string; value: number; key: string }[] = [];
    if (k !== undefined) {
      overrides.push(`eval.k=${k}`);
      translated.push({ flag: '--k', value: k, key: 'eval.k' });
    }
    if (episodes !== undefined) {
      overrides.push('eval.k=1', `eval.tasks=${episodes}`);
      translated.push({ flag: '--episodes', value: episodes, key: 'eval.tasks' });
    }
    if (values.checkpoint) {
      overrides.push(...(await checkpointOverrides(path.resolve(io.cwd, values.checkpoint as string), io.cwd, configPath, overrides)));
    }
    const warn = (message: string) => io.stderr.write(`drmas: ${message}\n`);
    const { kernel, file } = await createKernel({ cwd: io.cwd, configPath, overrides, warn }).catch((error: unknown) => {
      throw asOption(error, translated);
    });
    if (!kernel.hasTaps('evaluate')) {
      throw new DrmasError('NO_ROLLOUT', `nothing in ${file ?? 'the config'} evaluates: no preset or plugin taps the evaluate hook`, {
        key: 'presets',
        file,
        hint: 'add a preset with an environment and an orchestra, e.g. "presets": ["math"]',
      });
    }
    const metrics = await kernel
      .evaluate({
        runDir: values['run-dir'] as string | undefined,
        log: (m) => io.stderr.write(`drmas: ${m}\n`),
      })
      .catch((error: unknown) => {
        throw asOption(error, translated);
      });
    if (values.json) io.stdout.write(`${JSON.stringify(metrics)}\n`);
    else
      for (const [key, value] of Object.entries(metrics))
        io.stdout.write(`${key.padEnd(44)} ${Number.isInteger(value) ? value : value.toFixed(4)}\n`);
    return 0;
  },
};
