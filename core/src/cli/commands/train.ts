import path from 'node:path';
import { builtinPlugins } from '../../builtins/builtinPlugins.js';
import { createKernel } from '../../kernel/createKernel.js';
import { resolveResume } from '../../run/checkpointLayout.js';
import { CONFIG_HELP, CONFIG_OPTIONS, type CliCommand } from '../CliCommand.js';

function timestamp(): string {
  return new Date().toISOString().replace(/[:.]/g, '-').replace('T', '_').slice(0, 19);
}

export const trainCommand: CliCommand = {
  name: 'train',
  summary: 'run trainer.steps training steps and write a run directory',
  usage: 'drmas train [--config PATH] [--set KEY=VALUE ...] [--run-dir DIR] [--resume auto|DIR]',
  help: [
    ...CONFIG_HELP,
    ['--run-dir DIR', 'write the run here instead of <trainer.outputDir>/<trainer.runName or timestamp>'],
    ['--resume auto|DIR', 'continue from the latest checkpoint (auto: of --run-dir, or of the newest run), a run directory or a checkpoint folder'],
  ],
  options: { ...CONFIG_OPTIONS, 'run-dir': { type: 'string' }, resume: { type: 'string' } },
  async run({ values }, io) {
    const { kernel, config, file } = await createKernel({
      cwd: io.cwd, configPath: values.config as string | undefined, overrides: values.set as string[] | undefined,
      builtins: builtinPlugins('train'),
    });
    const givenRunDir = values['run-dir'] ? path.resolve(io.cwd, values['run-dir'] as string) : undefined;
    const outputDir = path.resolve(io.cwd, config.trainer.outputDir);
    const resume = values.resume
      ? resolveResume(values.resume === 'auto' ? 'auto' : path.resolve(io.cwd, values.resume as string), { runDir: givenRunDir, outputDir })
      : undefined;
    const runDir = resume?.runDir ?? givenRunDir ?? path.join(outputDir, config.trainer.runName ?? timestamp());
    const log = (message: string) => io.stderr.write(`drmas: ${message}\n`);
    log(`config ${file ?? '(none)'}; ${config.trainer.steps} steps; run directory ${runDir}`
      + (resume ? `; resuming after step ${resume.state.step} from ${resume.checkpoint}` : ''));
    const controller = new AbortController();
    const onSignal = () => controller.abort('SIGINT');
    process.once('SIGINT', onSignal);
    try {
      await kernel.run({ runDir, signal: controller.signal, log, firstStep: resume ? resume.state.step + 1 : 1, resumeFrom: resume?.checkpoint });
    } finally {
      process.off('SIGINT', onSignal);
    }
    log(`done: ${path.join(runDir, 'metrics.jsonl')}`);
    return 0;
  },
};
