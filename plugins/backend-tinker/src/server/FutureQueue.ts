import { setTimeout as sleep } from 'node:timers/promises';

/** How the server answers polls; every knob is there so clients' handling of each answer can be reproduced. */
export interface FuturePolicy {
  /** Wait before each queued request starts (a busy server), so its future is polled while pending. */
  delayMs: number;
  /** How long `retrieve_future` holds a poll for a request still running before answering "pending". */
  holdMs: number;
  /** "Pending" as `{"type": "try_again"}` with 200 (the hosted service's queue answer) or as HTTP 408 (SkyRL's). */
  pending: 'try_again' | '408';
  /**
   * A failed request as HTTP 400 with its error as `detail` (SkyRL's `retrieve_future`), or as 200 with
   * `{error, category}` (the hosted service's RequestFailedResponse).
   */
  failures: 'http400' | 'body';
  /** How long a finished result is kept for `retrieve_future`; read later, it answers 410 (expired). */
  keepMs: number;
  /**
   * Expire only so many results, after `expireAfterMs` (then `keepMs` again), and only of these request kinds: a
   * single lost result, reproducibly.
   */
  expire?: { afterMs: number; count: number; kinds?: readonly string[] };
}

/**
 * As SkyRL tx answers (skyrl/tinker/api.py `retrieve_future`, skyrl 0.3.0 and NovaSky-AI/SkyRL a9564572): a poll is
 * held up to 300 s, then answered 408; a failed request is a 400.
 */
export const DEFAULT_FUTURE_POLICY: FuturePolicy = { delayMs: 0, holdMs: 300_000, pending: '408', failures: 'http400', keepMs: 600_000 };

/** A request's own failure, answered as Tinker's `RequestFailedResponse`. */
export class RequestFailure extends Error {
  constructor(
    message: string,
    readonly category: 'user' | 'server' = 'user',
  ) {
    super(message);
  }
}

interface Entry {
  kind: string;
  done: Promise<void>;
  result?: unknown;
  failure?: { error: string; category: string };
  /** When the result may no longer be read. */
  expiresAt?: number;
}

export interface PollAnswer {
  status: number;
  body: unknown;
}

/**
 * The server's futures: requests run one at a time in submission order (the engines are not re-entrant, and Tinker
 * applies a model's requests in order), each under an id that `retrieve_future` polls.
 */
export class FutureQueue {
  private nextId = 1;
  private readonly entries = new Map<string, Entry>();
  private readonly expired = new Set<string>();
  /**
   * Request ids by the client's idempotency key and by `(model_id, seq_id)`: a submission sent again gets its first
   * try's future. SkyRL main de-duplicates by the latter only (`create_future` at a9564572), the SDK's retries by both.
   */
  private readonly byKey = new Map<string, string>();
  private tail: Promise<void> = Promise.resolve();

  constructor(public policy: FuturePolicy = DEFAULT_FUTURE_POLICY) {}

  /**
   * Queues `work`; answers its request id at once. `concurrent` work (sampling from saved weights, which no later
   * request changes) starts at once beside the queue instead of after it.
   */
  submit(kind: string, work: () => Promise<unknown>, concurrent = false, keys: readonly string[] = []): string {
    this.sweep();
    const seen = keys.map((key) => this.byKey.get(key)).find((id) => id !== undefined);
    if (seen !== undefined) return seen;
    const id = String(this.nextId++);
    const entry: Entry = { kind, done: Promise.resolve() };
    entry.done = (concurrent ? Promise.resolve() : this.tail).then(async () => {
      if (this.policy.delayMs > 0) await sleep(this.policy.delayMs);
      try {
        entry.result = await work();
      } catch (error) {
        entry.failure =
          error instanceof RequestFailure
            ? { error: error.message, category: error.category }
            : { error: (error as Error).message ?? String(error), category: 'server' };
      }
      entry.expiresAt = Date.now() + this.retention(kind);
    });
    if (!concurrent) this.tail = entry.done;
    this.entries.set(id, entry);
    for (const key of keys) this.byKey.set(key, id);
    return id;
  }

  /** `retrieve_future`: the result, a failure, "pending" after holding the poll, 410 once expired, 404 if unknown. */
  async retrieve(id: string): Promise<PollAnswer> {
    const entry = this.entries.get(id);
    if (!entry) {
      return this.expired.has(id)
        ? { status: 410, body: { detail: `the result of request ${id} expired` } }
        : { status: 404, body: { detail: `no request ${id}` } };
    }
    if (entry.expiresAt === undefined && this.policy.holdMs > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([entry.done, new Promise<void>((resolve) => (timer = setTimeout(resolve, this.policy.holdMs)))]);
      clearTimeout(timer);
    }
    if (entry.expiresAt === undefined) {
      return this.policy.pending === '408'
        ? { status: 408, body: { detail: 'Timeout waiting for result', queue_state: 'active' } }
        : { status: 200, body: { type: 'try_again', request_id: id, queue_state: 'active' } };
    }
    if (Date.now() >= entry.expiresAt) {
      this.forget(id);
      return { status: 410, body: { detail: `the result of request ${id} expired` } };
    }
    if (entry.failure && this.policy.failures === 'http400') return { status: 400, body: { detail: entry.failure.error } };
    return { status: 200, body: entry.failure ?? entry.result };
  }

  /** Drops expired results (they answer 410 from now on). */
  private sweep(): void {
    const now = Date.now();
    for (const [id, entry] of this.entries) if (entry.expiresAt !== undefined && now >= entry.expiresAt) this.forget(id);
  }

  private forget(id: string): void {
    this.entries.delete(id);
    this.expired.add(id);
    for (const [key, value] of this.byKey) if (value === id) this.byKey.delete(key);
  }

  private retention(kind: string): number {
    const expire = this.policy.expire;
    if (expire && expire.count > 0 && (!expire.kinds || expire.kinds.includes(kind))) {
      expire.count--;
      return expire.afterMs;
    }
    return this.policy.keepMs;
  }
}
