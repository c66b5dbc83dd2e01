import path from 'node:path';
import { builtinPlugins } from '../../builtins/builtinPlugins.js';
import { createKernel } from '../../kernel/createKernel.js';
import { CONFIG_HELP, CONFIG_OPTIONS, type CliCommand } from '../CliCommand.js';

export const evalCommand: CliCommand = {
  name: 'eval',
  summary: 'run the evaluate hook once (validation without training) and print its metrics',
  usage: 'drmas eval [--config PATH] [--set KEY=VALUE ...] [--run-dir DIR] [--json]',
  help: [...CONFIG_HELP, ['--run-dir DIR', 'where to write the evaluation (default <trainer.outputDir>/eval-<time>)'], ['--json', 'print the metrics as JSON']],
  options: { ...CONFIG_OPTIONS, 'run-dir': { type: 'string' }, json: { type: 'boolean' } },
  async run({ values }, io) {
    const { kernel, config } = await createKernel({
      cwd: io.cwd, configPath: values.config as string | undefined, overrides: values.set as string[] | undefined,
      builtins: builtinPlugins('eval'),
    });
    if (!kernel.hasTaps('evaluate')) {
      io.stderr.write('drmas: no plugin taps the evaluate hook, so there is nothing to evaluate (add a preset with an environment)\n');
      return 1;
    }
    const runDir = values['run-dir']
      ? path.resolve(io.cwd, values['run-dir'] as string)
      : path.resolve(io.cwd, config.trainer.outputDir, `eval-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    const metrics = await kernel.evaluate({ runDir, log: (m) => io.stderr.write(`drmas: ${m}\n`) });
    if (values.json) io.stdout.write(`${JSON.stringify(metrics)}\n`);
    else for (const [key, value] of Object.entries(metrics)) io.stdout.write(`${key.padEnd(40)} ${value}\n`);
    return 0;
  },
};
