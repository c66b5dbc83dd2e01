import { z } from '@drmas/core';

/** The `bullmq` config section: where the rollout workers' queue lives and how its jobs are run. */
export const bullmqSection = z.strictObject({
  /** The Redis server holding the queue (`redis://[user:password@]host:port[/db]`); its password is hidden wherever the config is shown. */
  redisUrl: z
    .string()
    .regex(/^rediss?:\/\//, 'a redis:// or rediss:// URL')
    .meta({ secret: 'url' })
    .default('redis://127.0.0.1:6379'),
  /**
   * The queue's name; default: derived from the run directory (`rollouts-<folder>-<hash of its path>`), so two runs
   * never share jobs. Workers find it from the same run directory (`drmas rollout-worker --run-dir`).
   */
  queue: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, ".", "_" and "-"')
    .max(200)
    .optional(),
  /** Seconds a worker may take on one prompt group before the attempt fails (and is retried). */
  jobTimeout: z.number().positive().max(86_400).default(600),
  /** Tries of a prompt group, the first included; a group that fails them all fails the step. */
  attempts: z.number().int().min(1).max(100).default(3),
  /** Seconds before the first retry; each further retry waits twice as long. */
  backoff: z.number().min(0).max(3_600).default(1),
  /**
   * Seconds a worker holds a job without renewing its lock before the job counts as stalled (its worker died) and
   * runs elsewhere. Workers renew it every half of this while they sample.
   */
  lockDuration: z.number().min(1).max(3_600).default(30),
  /** Seconds the trainer waits for a worker to connect to the queue before it stops with a message on how to start one. */
  workerWait: z.number().positive().max(86_400).default(120),
});

export type BullmqSettings = z.output<typeof bullmqSection>;

declare module '@drmas/core' {
  interface ConfigSections {
    /** Rollout workers on BullMQ (`rollout.workers: bullmq`): the Redis server, the queue, timeouts and retries. */
    bullmq?: z.input<typeof bullmqSection>;
  }
}
