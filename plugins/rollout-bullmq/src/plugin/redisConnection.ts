import { Redis } from 'ioredis';
import { DrmasError, redactUrl } from '@drmas/core';

/** The prefix of every key the rollout queues keep in Redis. */
export const KEY_PREFIX = 'drmas';

/** What to do when Redis does not answer at `url`. */
function startHint(url: string): string {
  const port = /:(\d+)(?:\/|$)/.exec(url.replace(/^rediss?:\/\/[^@]*@/, 'redis://'))?.[1] ?? '6379';
  return (
    `start one: redis-server --port ${port} (Debian: apt-get install redis-server), or point bullmq.redisUrl ` +
    '(or --redis for drmas rollout-worker) at a running server'
  );
}

/**
 * Checks that Redis answers at `url` (one try, a few seconds), so that an unreachable server is a clear error rather
 * than BullMQ's endless reconnecting. `key` is the setting that named the URL.
 */
export async function checkRedis(url: string, key: string, timeoutMs = 5_000): Promise<void> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: timeoutMs, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
  } catch (cause) {
    throw new DrmasError('SERVICE_FAILED', `Redis at ${redactUrl(url)} is unreachable: ${(cause as Error).message}`, {
      key,
      cause,
      hint: startHint(url),
    });
  } finally {
    client.disconnect();
  }
}

/** A connection for BullMQ's queues and workers (which retry commands while Redis restarts, as BullMQ requires). */
export function bullmqConnection(url: string): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: null });
  // BullMQ reports lost connections through its own objects; an unhandled 'error' event would crash the process.
  client.on('error', () => {});
  return client;
}
