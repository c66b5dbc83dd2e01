import path from 'node:path';
import { builtinPlugins } from '../../builtins/builtinPlugins.js';
import { createKernel } from '../../kernel/createKernel.js';
import { CONFIG_HELP, CONFIG_OPTIONS, type CliCommand } from '../CliCommand.js';

function timestamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-').replace('T', '_').slice(0, 19);
}

export const trainCommand: CliCommand = {
  name: 'train',
  summary: 'run trainer.steps training steps and write a run directory',
  usage: 'drmas train [--config PATH] [--set KEY=VALUE ...] [--run-dir DIR]',
  help: [...CONFIG_HELP, ['--run-dir DIR', 'write the run here instead of <trainer.outputDir>/<trainer.runName or timestamp>']],
  options: { ...CONFIG_OPTIONS, 'run-dir': { type: 'string' } },
  async run({ values }, io) {
    const { kernel, config, file } = await createKernel({
      cwd: io.cwd, configPath: values.config as string | undefined, overrides: values.set as string[] | undefined,
      builtins: builtinPlugins('train'),
    });
    const runDir = values['run-dir']
      ? path.resolve(io.cwd, values['run-dir'] as string)
      : path.resolve(io.cwd, config.trainer.outputDir, config.trainer.runName ?? timestamp());
    const log = (message: string) => io.stderr.write(`drmas: ${message}\n`);
    log(`config ${file ?? '(none)'}; ${config.trainer.steps} steps; run directory ${runDir}`);
    const controller = new AbortController();
    const onSignal = () => controller.abort('SIGINT');
    process.once('SIGINT', onSignal);
    try {
      await kernel.run({ runDir, signal: controller.signal, log });
    } finally {
      process.off('SIGINT', onSignal);
    }
    log(`done: ${path.join(runDir, 'metrics.jsonl')}`);
    return 0;
  },
};
