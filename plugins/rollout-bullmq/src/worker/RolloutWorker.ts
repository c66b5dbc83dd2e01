import { hostname } from 'node:os';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { DrmasError, redactUrl, WorkerGroups, type Kernel } from '@drmas/core';
import { EpisodeRunner } from '@drmas/plugin-orchestra';
import type { BullmqSettings } from '../plugin/bullmqConfig.js';
import { EPISODE_JOB, type EpisodeJobData, type EpisodeJobResult, type WeightsRelease } from '../plugin/episodeJob.js';
import { bullmqConnection, checkRedis, KEY_PREFIX } from '../plugin/redisConnection.js';

export interface RolloutWorkerOptions {
  queue: string;
  settings: BullmqSettings;
  /** Jobs this process runs at once (they share its engines). */
  concurrency: number;
  log: (message: string) => void;
  /** The setting that named the Redis URL, for the error when it is unreachable. */
  redisKey: string;
}

/** Errors a retry cannot mend (a bad config or input): the job fails at once instead of using up its attempts. */
function permanent(error: unknown): boolean {
  return DrmasError.is(error) && !['SERVICE_FAILED', 'OUT_OF_MEMORY'].includes(error.code);
}

/**
 * A rollout worker: the kernel built from the run's config, with only the worker groups' rollout engines and the
 * environment loaded (no trainer, no run directory), taking prompt groups from the run's queue. Before it samples a
 * job it loads the job's weights when their tag differs from the ones it holds.
 */
export class RolloutWorker {
  readonly name = `${hostname()}:${process.pid}`;
  private bullmqWorker?: Worker<EpisodeJobData, EpisodeJobResult>;
  private connection?: Redis;
  private loaded?: string;
  private loading: Promise<void> = Promise.resolve();
  private jobs = 0;
  /** The worker groups (their rollout engines) and the episode runner of the run's config. */
  private readonly services;

  constructor(
    private readonly kernel: Kernel,
    private readonly options: RolloutWorkerOptions,
  ) {
    this.services = kernel.inject({ groups: WorkerGroups, runner: EpisodeRunner }, 'drmas rollout-worker');
  }

  /** Checks Redis, loads the engines and the environment, then starts taking jobs. */
  async start(): Promise<void> {
    const { settings, log } = this.options;
    await checkRedis(settings.redisUrl, this.options.redisKey);
    const run = this.kernel.runContext({ runDir: this.kernel.cwd, log });
    await this.services.groups.createForSampling(run);
    await this.services.runner.environment.init();
    this.connection = bullmqConnection(settings.redisUrl);
    const lockDuration = settings.lockDuration * 1000;
    this.bullmqWorker = new Worker<EpisodeJobData, EpisodeJobResult>(this.options.queue, (job) => this.process(job), {
      connection: this.connection,
      prefix: KEY_PREFIX,
      concurrency: this.options.concurrency,
      name: this.name,
      lockDuration,
      stalledInterval: lockDuration,
      maxStalledCount: settings.attempts,
    });
    this.bullmqWorker.on('error', (error) => log(`rollout worker ${this.name}: ${error.message}`));
    await this.bullmqWorker.waitUntilReady();
    log(`rollout worker ${this.name} takes jobs from queue ${this.options.queue} at ${redactUrl(settings.redisUrl)}`);
  }

  /** Stops taking jobs, lets the current ones finish, and releases the engines. */
  async stop(): Promise<void> {
    await this.bullmqWorker?.close();
    this.connection?.disconnect();
    this.services.groups.dispose();
    this.options.log(`rollout worker ${this.name} stopped after ${this.jobs} job(s)`);
  }

  private async process(job: Job<EpisodeJobData, EpisodeJobResult>): Promise<EpisodeJobResult> {
    if (job.name !== EPISODE_JOB) throw new UnrecoverableError(`unknown job "${job.name}" (this worker runs "${EPISODE_JOB}" jobs)`);
    const started = performance.now();
    const { data } = job;
    const timeoutMs = this.options.settings.jobTimeout * 1000;
    let timer: NodeJS.Timeout | undefined;
    try {
      const result = await Promise.race([
        this.episodes(data),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`timed out after ${this.options.settings.jobTimeout} s (bullmq.jobTimeout)`)),
            timeoutMs,
          );
        }),
      ]);
      this.jobs++;
      const turns = result.trajectories.reduce((n, t) => n + t.turns.length, 0);
      this.options.log(
        `rollout worker ${this.name}: step ${data.step} prompt group ${data.group} (${result.trajectories.length} episodes, ${turns} turns) ` +
          `in ${((performance.now() - started) / 1000).toFixed(2)} s, weights v${data.weights.version}, attempt ${job.attemptsMade + 1}`,
      );
      return result;
    } catch (error) {
      const message = DrmasError.is(error) ? `${error.code}: ${error.message}` : (error as Error).message;
      this.options.log(`rollout worker ${this.name}: step ${data.step} prompt group ${data.group} failed: ${message}`);
      throw permanent(error) ? new UnrecoverableError(message) : new Error(message);
    } finally {
      clearTimeout(timer);
    }
  }

  private async episodes(data: EpisodeJobData): Promise<EpisodeJobResult> {
    await this.useWeights(data.weights);
    const run = await this.services.runner.run({
      tasks: [data.task],
      samplesPerTask: data.samplesPerTask,
      seed: data.seed,
      idPrefix: data.idPrefix,
      firstTask: data.group,
      sampleStreams: data.sampleStreams,
    });
    return { rolloutWorker: this.name, trajectories: run.trajectories };
  }

  /** Loads the release's weights into every rollout engine unless they are the ones loaded (one load at a time). */
  private useWeights(release: WeightsRelease): Promise<void> {
    const next = this.loading.then(async () => {
      if (this.loaded === release.tag) return;
      const groups = this.services.groups.all();
      for (const group of groups) {
        const dir = release.paths[group.id];
        if (!dir)
          throw new UnrecoverableError(`the job carries no weights for worker group ${group.id}: is this worker's config the run's?`);
        await group.rollout.load(dir);
      }
      this.loaded = release.tag;
      this.options.log(`rollout worker ${this.name}: loaded weights v${release.version}`);
    });
    // A failed load fails its job (which is retried); the next job tries again.
    this.loading = next.catch(() => undefined);
    return next;
  }
}
