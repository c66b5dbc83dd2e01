import path from 'node:path';
import { CONFIG_HELP, CONFIG_OPTIONS, createKernel, DrmasError, integerOption, redactUrl, type CliCommand } from '@drmas/core';
import { bullmqSection, type BullmqSettings } from '../plugin/bullmqConfig.js';
import { queueNameFor } from '../plugin/queueName.js';
import { RolloutWorker } from '../worker/RolloutWorker.js';

const MAX_CONCURRENCY = 64;

/** The run's queue: --queue, bullmq.queue, or the name derived from the run directory (--run-dir, else trainer.runName). */
function queueOf(
  values: Record<string, unknown>,
  settings: BullmqSettings,
  outputDir: string,
  runName: string | undefined,
  cwd: string,
): string {
  const given = (values.queue as string | undefined) ?? settings.queue;
  if (given !== undefined) {
    if (!/^[A-Za-z0-9_.-]+$/.test(given)) {
      throw new DrmasError('INVALID_ARGUMENT', `--queue ${JSON.stringify(given)} is not a queue name`, {
        key: '--queue',
        hint: 'letters, digits, ".", "_" and "-": the name the trainer logged ("rollout workers: queue ...")',
      });
    }
    return given;
  }
  const runDir = values['run-dir'] as string | undefined;
  if (runDir !== undefined) return queueNameFor(path.resolve(cwd, runDir));
  if (runName !== undefined) return queueNameFor(path.resolve(cwd, outputDir, runName));
  throw new DrmasError('INVALID_ARGUMENT', "the run's queue is named after its run directory, which this command was not given", {
    key: '--run-dir',
    hint: 'give the run directory drmas train uses (--run-dir DIR, as in the line the trainer logs), or --queue NAME, or set trainer.runName or bullmq.queue in the config',
  });
}

export const rolloutWorkerCommand: CliCommand = {
  name: 'rollout-worker',
  summary: 'a rollout worker: runs prompt groups of a `rollout.workers: bullmq` run from Redis',
  usage: 'drmas rollout-worker --config PATH (--run-dir DIR | --queue NAME) [--redis URL] [--concurrency 1] [--set KEY=VALUE ...]',
  help: [
    ...CONFIG_HELP,
    [
      '--run-dir DIR',
      'the run directory of the training run to serve (its queue is named after it); default: <trainer.outputDir>/<trainer.runName>',
    ],
    ['--queue NAME', 'the queue to serve instead (bullmq.queue, or the name the trainer logs)'],
    ['--redis URL', 'the Redis server (default: bullmq.redisUrl, redis://127.0.0.1:6379)'],
    ['--concurrency N', 'prompt groups this process runs at once, sharing its engines (default 1)'],
  ],
  options: {
    ...CONFIG_OPTIONS,
    'run-dir': { type: 'string' },
    queue: { type: 'string' },
    redis: { type: 'string' },
    concurrency: { type: 'string' },
  },
  async run({ values }, io) {
    const concurrency =
      integerOption(values, 'concurrency', {
        min: 1,
        max: MAX_CONCURRENCY,
        example: 1,
        note: 'jobs of one worker share its engines; start more workers to use more cores',
      }) ?? 1;
    const { kernel, config } = await createKernel({
      cwd: io.cwd,
      configPath: values.config as string | undefined,
      overrides: values.set as string[] | undefined,
    });
    let settings = bullmqSection.parse(config.bullmq ?? {});
    let redisKey = 'bullmq.redisUrl';
    if (values.redis !== undefined) {
      const parsed = bullmqSection.shape.redisUrl.safeParse(values.redis);
      if (!parsed.success) {
        throw new DrmasError(
          'INVALID_ARGUMENT',
          `--redis expects a redis:// URL, got ${JSON.stringify(redactUrl(values.redis as string))}`,
          {
            key: '--redis',
            hint: 'e.g. --redis redis://127.0.0.1:6379',
          },
        );
      }
      settings = { ...settings, redisUrl: parsed.data };
      redisKey = '--redis';
    }
    const queue = queueOf(values, settings, config.trainer.outputDir, config.trainer.runName, io.cwd);
    const log = (message: string) => io.stderr.write(`drmas: ${message}\n`);
    const rolloutWorker = new RolloutWorker(kernel, { queue, settings, concurrency, log, redisKey });
    const stopped = new Promise<string>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
    });
    try {
      await rolloutWorker.start();
      const signal = await stopped;
      log(`${signal}: finishing the current job, then stopping`);
    } finally {
      await rolloutWorker.stop();
    }
    return 0;
  },
};

export default rolloutWorkerCommand;
