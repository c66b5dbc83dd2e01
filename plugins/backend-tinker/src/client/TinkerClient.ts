import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DrmasError, fetchText, redactUrl, retrying, type NoAnswer } from '@drmas/core';
import type { RequestFailedResponse, TryAgainResponse, UntypedApiFuture } from './tinkerWire.js';

export interface TinkerClientOptions {
  /** The server, e.g. `https://tinker.thinkingmachines.dev/services/tinker-prod` or `http://127.0.0.1:8000` (no `/api/v1`). */
  baseUrl: string;
  /** Sent as `X-API-Key` (the Python SDK's header), when set. */
  apiKey?: string;
  /** Per HTTP call (a submission or one poll). */
  timeoutMs: number;
  /** Further tries of a submission that failed on the network, with 429 or with 5xx, with doubling waits from `retryDelayMs`. */
  retries: number;
  retryDelayMs: number;
  /** How long a request may stay unfinished (polled through try-again and 408 answers) before it fails. */
  futureTimeoutMs: number;
  /** Wait between two polls of a future answered `try_again`. */
  pollIntervalMs: number;
  /** Times a request whose future expired (410) is submitted again; only requests that change nothing on the server are. */
  resubmits: number;
  /** Where `key` in errors points (`models.policy.tinker`). */
  key?: string;
}

/** Counts of what polling met, for tests and the run log. */
export interface FutureStats {
  /** `retrieve_future` answered `{"type": "try_again"}`. */
  tryAgain: number;
  /** `retrieve_future` answered 408: the server held the poll and the request is still running. */
  timeouts: number;
  /** `retrieve_future` answered 410: the future expired or broke. */
  expired: number;
  /** Requests submitted again after a 410. */
  resubmitted: number;
  /** Submissions or polls tried again after a network error, 429 or 5xx. */
  retries: number;
}

export interface CallOptions {
  /**
   * Whether submitting the request again cannot change the server's state (forward, sampling, saving weights under a
   * new name): only such requests are resubmitted when their future expires. forward_backward and optim_step are not:
   * gradients would be counted twice, so an expired one fails and names the checkpoint to resume from.
   */
  idempotent: boolean;
}

/** The header the Python SDK's client sends with a key per request, the same on its retries (src/tinker/_client.py). */
export const IDEMPOTENCY_HEADER = 'x-idempotency-key';

interface HttpAnswer {
  status: number;
  body: unknown;
}

/** An HTTP status worth trying again: the server is overloaded or failed in passing. */
function transient(status: number): boolean {
  return status === 429 || status >= 500;
}

/**
 * The Tinker API over Node's fetch: every training and sampling call is submitted (`POST /api/v1/<name>`, answered
 * with a `request_id`) and its result polled through `POST /api/v1/retrieve_future` until it is ready, as the Python
 * SDK's `_APIFuture` does (src/tinker/lib/api_future_impl.py): a `try_again` body or a 408 polls again, a 410 means
 * the future expired (the SDK raises a retryable error; here an idempotent request is resubmitted, any other fails),
 * a body with `error` is the request's own failure. Failures are SERVICE_FAILED naming the url and the request.
 */
export class TinkerClient {
  readonly stats: FutureStats = { tryAgain: 0, timeouts: 0, expired: 0, resubmitted: 0, retries: 0 };
  readonly baseUrl: string;
  /** The server as messages and checkpoints name it: `baseUrl` with its user info (sent as basic auth) redacted. */
  readonly shownUrl: string;

  constructor(private readonly options: TinkerClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.shownUrl = redactUrl(this.baseUrl);
  }

  /** Submits `body` to `/api/v1/<name>` and waits for its future's result. */
  async call<T>(name: string, body: Record<string, unknown>, options: CallOptions): Promise<T> {
    for (let submission = 0; ; submission++) {
      const future = await this.submit(name, body);
      const result = await this.poll<T>(name, future.request_id, options.idempotent && submission < this.options.resubmits);
      if (result.expired === undefined) return result.value as T;
      this.stats.resubmitted++;
    }
  }

  /** Submits and answers the future as the server gave it (`create_model` on SkyRL adds `model_id`). */
  async submit(name: string, body: Record<string, unknown>): Promise<UntypedApiFuture> {
    // One key for every try of this submission: a server that got a try whose answer was lost queues it once.
    const answer = await this.send('POST', name, body, true, randomUUID());
    const future = answer.body as Partial<UntypedApiFuture>;
    if (answer.status !== 200) throw this.failure(name, `HTTP ${answer.status}: ${detail(answer.body)}`);
    if (typeof future?.request_id !== 'string' && typeof future?.request_id !== 'number') {
      throw this.failure(name, `the answer has no request_id: ${JSON.stringify(answer.body).slice(0, 200)}`);
    }
    return { ...future, request_id: String(future.request_id) };
  }

  /**
   * Polls one future until it finishes. A 410 answers `{ expired }` when `resubmit` allows it, else fails; the
   * deadline is `futureTimeoutMs` from now.
   */
  async poll<T>(name: string, requestId: string, resubmit: boolean): Promise<{ value?: T; expired?: true }> {
    const deadline = Date.now() + this.options.futureTimeoutMs;
    let backoff = this.options.retryDelayMs;
    for (;;) {
      if (Date.now() > deadline) {
        throw this.failure(name, `request ${requestId} is still unfinished after ${this.options.futureTimeoutMs} ms`, {
          hint: 'the server is busy or stuck; raise tinker.futureTimeoutMs if it is only slow',
        });
      }
      const answer = await this.post('retrieve_future', { request_id: requestId }, false);
      if (answer.status === 0 || transient(answer.status)) {
        this.stats.retries++;
        await sleep(backoff);
        backoff = Math.min(backoff * 2, 30_000);
        continue;
      }
      if (answer.status === 408) {
        this.stats.timeouts++;
        continue;
      }
      if (answer.status === 410) {
        this.stats.expired++;
        if (resubmit) return { expired: true };
        throw this.failure(name, `request ${requestId} expired on the server (HTTP 410) before its result was read`, {
          hint:
            'the result is lost and the model state after it is unknown; resume the run from its last checkpoint ' +
            '(drmas train --resume), and poll sooner (lower tinker.pollIntervalMs) if the server keeps futures briefly',
        });
      }
      if (answer.status !== 200)
        throw this.failure(name, `retrieve_future for request ${requestId}: HTTP ${answer.status}: ${detail(answer.body)}`);
      const body = answer.body as Partial<TryAgainResponse & RequestFailedResponse>;
      if (body?.type === 'try_again') {
        this.stats.tryAgain++;
        await sleep(this.options.pollIntervalMs);
        continue;
      }
      if (typeof body?.error === 'string') {
        throw this.failure(name, `request ${requestId} failed (${body.category ?? 'unknown'} error): ${body.error}`);
      }
      return { value: answer.body as T };
    }
  }

  /** `GET /api/v1/<name>`, retried as a submission is. */
  async get<T>(name: string): Promise<T> {
    const answer = await this.send('GET', name, undefined, true);
    if (answer.status !== 200) throw this.failure(name, `HTTP ${answer.status}: ${detail(answer.body)}`);
    return answer.body as T;
  }

  private post(name: string, body: Record<string, unknown>, retry: boolean): Promise<HttpAnswer> {
    return this.send('POST', name, body, retry);
  }

  /**
   * One call; with `retry`, network errors, 429 and 5xx are tried again up to `retries` times. Without it a network
   * error answers status 0 (the poller decides).
   */
  private async send(method: 'GET' | 'POST', name: string, body: unknown, retry: boolean, idempotencyKey?: string): Promise<HttpAnswer> {
    const url = `${this.baseUrl}/api/v1/${name}`;
    const init = {
      method,
      headers: {
        'content-type': 'application/json',
        ...(this.options.apiKey ? { 'x-api-key': this.options.apiKey } : {}),
        ...(idempotencyKey ? { [IDEMPOTENCY_HEADER]: idempotencyKey } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      timeoutMs: this.options.timeoutMs,
    };
    let last: HttpAnswer | NoAnswer | undefined;
    const result = await retrying<HttpAnswer>(
      { retries: retry ? this.options.retries : 0, delayMs: this.options.retryDelayMs },
      async () => {
        const answer = await fetchText(url, init);
        if ('failure' in answer) {
          if (!retry) return { value: { status: 0, body: answer.failure } };
          last = answer;
          return { retry: answer.failure };
        }
        last = { status: answer.status, body: parseJson(answer.text) };
        return retry && transient(answer.status) ? { retry: `HTTP ${answer.status}` } : { value: last };
      },
      (failed) => {
        if (failed.willRetry) this.stats.retries++;
      },
    );
    if ('value' in result) return result.value;
    if (!('failure' in last!)) return last!;
    throw this.failure(name, `${last.failure} (after ${result.exhausted.tries} tries)`, {
      cause: last.error,
      hint: `check that the server at ${this.shownUrl} is running and reachable, or raise tinker.timeoutMs`,
    });
  }

  private failure(name: string, message: string, details: { hint?: string; cause?: unknown } = {}): DrmasError {
    return new DrmasError('SERVICE_FAILED', `Tinker ${this.shownUrl}/api/v1/${name}: ${message}`, {
      key: this.options.key,
      cause: details.cause,
      hint: details.hint ?? `check the server's log; the request was ${name}`,
    });
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The server's own words for a failure: FastAPI's `detail`, an `error`, or the body. */
function detail(body: unknown): string {
  if (typeof body === 'object' && body !== null) {
    const b = body as { detail?: unknown; error?: unknown };
    const said = b.detail ?? b.error;
    if (said !== undefined) return typeof said === 'string' ? said : JSON.stringify(said);
  }
  return String(JSON.stringify(body) ?? '').slice(0, 300);
}
