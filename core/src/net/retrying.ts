/**
 * How a client tries again after a failure retrying can fix: `retries` further tries after the first, waiting
 * `delayMs` before the first retry and twice as long before each next one, at most `maxDelayMs`, each wait scaled by a
 * random factor in [1 - jitter, 1 + jitter] so that clients failing together do not retry together.
 */
export interface RetrySchedule {
  retries: number;
  delayMs: number;
  maxDelayMs?: number;
  jitter?: number;
}

/** The wait before retry `retry` (1-based) of `schedule`, in milliseconds. */
export function retryDelay(schedule: RetrySchedule, retry: number, random: () => number = Math.random): number {
  const base = Math.min(schedule.maxDelayMs ?? Number.POSITIVE_INFINITY, schedule.delayMs * 2 ** (retry - 1));
  const jitter = schedule.jitter ?? 0;
  return Math.round(jitter > 0 ? base * (1 + jitter * (2 * random() - 1)) : base);
}

/**
 * One try's outcome: its value, or why it failed in a way another try may fix (and, where the server said how long to
 * wait, `afterMs`, which replaces the schedule's wait). Failures no retry fixes are thrown.
 */
export type TryOutcome<T> = { value: T } | { retry: string; afterMs?: number };

/** A failed try as `onRetry` hears of it. */
export interface FailedTry {
  /** 1-based number of the try that failed. */
  attempt: number;
  reason: string;
  willRetry: boolean;
  /** The wait before the next try (0 when none follows). */
  delayMs: number;
}

/** Every try failed in a retryable way: their reasons, in order. */
export interface RetriesExhausted {
  exhausted: { tries: number; reasons: string[] };
}

/**
 * Runs `attempt` until it gives a value, throws, or `schedule.retries` retries have failed. The caller turns an
 * exhausted schedule into its own error (naming its server, key and hint), so this never throws on its own.
 */
export async function retrying<T>(
  schedule: RetrySchedule,
  attempt: (tryNumber: number) => Promise<TryOutcome<T>>,
  onRetry?: (failed: FailedTry) => void,
): Promise<{ value: T } | RetriesExhausted> {
  const reasons: string[] = [];
  for (let tryNumber = 1; ; tryNumber++) {
    const outcome = await attempt(tryNumber);
    if ('value' in outcome) return outcome;
    reasons.push(outcome.retry);
    const willRetry = tryNumber <= schedule.retries;
    const delayMs = willRetry ? (outcome.afterMs ?? retryDelay(schedule, tryNumber)) : 0;
    onRetry?.({ attempt: tryNumber, reason: outcome.retry, willRetry, delayMs });
    if (!willRetry) return { exhausted: { tries: tryNumber, reasons } };
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
}
