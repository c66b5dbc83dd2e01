import { createKernel } from '../../kernel/createKernel.js';
import { CONFIG_HELP, CONFIG_OPTIONS, type CliCommand } from '../CliCommand.js';

export const trainCommand: CliCommand = {
  name: 'train',
  summary: 'run trainer.steps training steps and write a run directory',
  usage: 'drmas train [--config PATH] [--set KEY=VALUE ...] [--run-dir DIR] [--resume auto|DIR]',
  help: [
    ...CONFIG_HELP,
    ['--run-dir DIR', 'write the run here instead of <trainer.outputDir>/<trainer.runName or timestamp>'],
    [
      '--resume auto|DIR',
      'continue from the newest checkpoint that verifies (auto: of --run-dir, or of the newest run; none: start at step 1), of a run directory, or a checkpoint folder',
    ],
  ],
  options: { ...CONFIG_OPTIONS, 'run-dir': { type: 'string' }, resume: { type: 'string' } },
  async run({ values }, io) {
    const log = (message: string) => io.stderr.write(`drmas: ${message}\n`);
    const { kernel } = await createKernel({
      cwd: io.cwd,
      configPath: values.config as string | undefined,
      overrides: values.set as string[] | undefined,
      warn: log,
    });
    const controller = new AbortController();
    const onSignal = () => controller.abort('SIGINT');
    process.once('SIGINT', onSignal);
    try {
      const run = await kernel.run({
        runDir: values['run-dir'] as string | undefined,
        resume: values.resume as string | undefined,
        signal: controller.signal,
        log,
      });
      log(`done: ${run.runDir}/metrics.jsonl`);
    } finally {
      process.off('SIGINT', onSignal);
    }
    return 0;
  },
};
