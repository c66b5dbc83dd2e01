import { Queue, QueueEvents, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { DrmasError, makeTrajectoryTurns, redactUrl, type Trajectory } from '@drmas/core';
import type { BullmqSettings } from './bullmqConfig.js';
import { EPISODE_JOB, type EpisodeJobData, type EpisodeJobResult } from './episodeJob.js';
import { bullmqConnection, checkRedis, KEY_PREFIX } from './redisConnection.js';

export interface StepEpisodes {
  /** Trajectories of every prompt group, in group order (as the in-process batch is ordered). */
  trajectories: Trajectory[];
  /** The rollout workers that ran the step's groups. */
  rolloutWorkers: Set<string>;
}

/** How the trainer tells a user to start a worker for this run. */
export type WorkerStartHint = () => string;

/**
 * The trainer's end of a run's queue: enqueues a step's prompt groups as jobs (retried with backoff by BullMQ, and run
 * elsewhere when their worker dies) and waits for every group's result, keeping the first result of each group.
 */
export class RolloutQueue {
  private constructor(
    readonly name: string,
    private readonly settings: BullmqSettings,
    private readonly connections: Redis[],
    private readonly queue: Queue<EpisodeJobData, EpisodeJobResult>,
    private readonly events: QueueEvents,
    private readonly startHint: WorkerStartHint,
    private readonly log: (message: string) => void,
  ) {}

  /** Connects (a clear SERVICE_FAILED when Redis is down) and clears what an earlier trainer left in the run's queue. */
  static async open(
    name: string,
    settings: BullmqSettings,
    startHint: WorkerStartHint,
    log: (message: string) => void,
  ): Promise<RolloutQueue> {
    await checkRedis(settings.redisUrl, 'bullmq.redisUrl');
    const connections = [bullmqConnection(settings.redisUrl), bullmqConnection(settings.redisUrl)];
    const queue = new Queue<EpisodeJobData, EpisodeJobResult>(name, { connection: connections[0]!, prefix: KEY_PREFIX });
    const events = new QueueEvents(name, { connection: connections[1]!, prefix: KEY_PREFIX });
    // Each job the trainer waits for listens on both (a step has promptsPerStep of them).
    queue.setMaxListeners(0);
    events.setMaxListeners(0);
    await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
    // Jobs of an interrupted earlier trainer of this run would be sampled with weights this one no longer publishes.
    await queue.obliterate({ force: true });
    return new RolloutQueue(name, settings, connections, queue, events, startHint, log);
  }

  /** Runs the step's prompt groups on the workers; fails with SERVICE_FAILED naming the group when one exhausts its attempts. */
  async run(groups: EpisodeJobData[]): Promise<StepEpisodes> {
    const { attempts, backoff } = this.settings;
    const jobs = await this.queue.addBulk(
      groups.map((data) => ({
        name: EPISODE_JOB,
        data,
        opts: { attempts, backoff: { type: 'exponential', delay: backoff * 1000 } },
      })),
    );
    const results = new Map<number, EpisodeJobResult>();
    try {
      await Promise.race([
        Promise.all(
          jobs.map(async (job) => {
            const result = await this.finished(job);
            // A group's first result is kept: a late duplicate (a stalled worker that finished after all) is dropped.
            if (!results.has(job.data.group)) results.set(job.data.group, result);
          }),
        ),
        this.watchWorkers(jobs),
      ]);
    } finally {
      this.stopWatching?.();
      await Promise.all(jobs.map((job) => job.remove().catch(() => undefined)));
    }
    const trajectories: Trajectory[] = [];
    const rolloutWorkers = new Set<string>();
    for (const data of groups) {
      const result = results.get(data.group)!;
      // The trajectories came as JSON: their turns are made again, so `step` reads their round.
      trajectories.push(...result.trajectories.map(makeTrajectoryTurns));
      rolloutWorkers.add(result.rolloutWorker);
    }
    return { trajectories, rolloutWorkers };
  }

  private async finished(job: Job<EpisodeJobData, EpisodeJobResult>): Promise<EpisodeJobResult> {
    try {
      return await job.waitUntilFinished(this.events);
    } catch (cause) {
      const { group, step } = job.data;
      throw new DrmasError(
        'SERVICE_FAILED',
        `rollout workers failed prompt group ${group} of step ${step} (task ${job.data.task.id}) after ${this.settings.attempts} attempt(s): ${(cause as Error).message}`,
        {
          key: 'bullmq.attempts',
          cause,
          hint: "the worker's own log has the whole error; a transient failure may pass with more bullmq.attempts",
        },
      );
    }
  }

  private stopWatching?: () => void;

  /**
   * Rejects when no worker has been connected to the queue for `bullmq.workerWait` seconds while jobs wait, after
   * saying how to start one; never resolves otherwise.
   */
  private watchWorkers(jobs: Array<Job<EpisodeJobData, EpisodeJobResult>>): Promise<never> {
    const { workerWait } = this.settings;
    return new Promise<never>((_, reject) => {
      let since = performance.now();
      let told = false;
      const timer = setInterval(() => {
        void this.queue.getWorkersCount().then(
          (count) => {
            if (count > 0) {
              since = performance.now();
              return;
            }
            const waited = (performance.now() - since) / 1000;
            if (!told && waited >= Math.min(5, workerWait)) {
              told = true;
              this.log(
                `no rollout worker is connected to queue ${this.name}; waiting up to ${workerWait} s. Start one: ${this.startHint()}`,
              );
            }
            if (waited >= workerWait) {
              reject(
                new DrmasError(
                  'SERVICE_FAILED',
                  `no rollout worker connected to queue ${this.name} at ${redactUrl(this.settings.redisUrl)} for ${workerWait} s; ${jobs.length} prompt groups of step ${jobs[0]?.data.step} are waiting`,
                  { key: 'bullmq.workerWait', hint: `start one or more workers: ${this.startHint()}` },
                ),
              );
            }
          },
          () => undefined,
        );
      }, 1_000);
      this.stopWatching = () => clearInterval(timer);
    });
  }

  /** Removes the run's jobs and disconnects. */
  async close(): Promise<void> {
    await this.queue.obliterate({ force: true }).catch(() => undefined);
    await Promise.allSettled([this.queue.close(), this.events.close()]);
    for (const connection of this.connections) connection.disconnect();
  }
}
