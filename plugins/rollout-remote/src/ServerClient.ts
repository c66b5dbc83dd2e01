import { DrmasError, fetchText, redactUrl, retrying, serverMessage } from '@drmas/core';

export interface ServerClientOptions {
  /** Base URL, no trailing slash needed. */
  url: string;
  /** Per request; a request unanswered then fails with SERVICE_FAILED (not retried: the server may still be working on it). */
  timeoutMs: number;
  /** Further tries of a request that could not connect or got a 5xx or 429. */
  retries: number;
  /** Wait before the first retry; doubles on each later one. */
  retryDelayMs: number;
  /** The config key the settings came from, for messages (`models.policy.rollout`). */
  key: string;
}

export interface ServerClientStats {
  /** Requests answered with a 2xx. */
  requests: number;
  /** Retries made (connection errors, 5xx, 429). */
  retries: number;
}

/** Error codes of a connection that never carried an answer: safe to retry, since the server did no work. */
const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'UND_ERR_SOCKET']);

/**
 * JSON over HTTP to one inference server, with a timeout per request and bounded retries of what retrying can fix
 * (a refused or reset connection, a 5xx, a 429). Every failure is a SERVICE_FAILED naming the URL, at the config key.
 */
export class ServerClient {
  readonly stats: ServerClientStats = { requests: 0, retries: 0 };
  private readonly base: string;
  private readonly shown: string;

  constructor(private readonly options: ServerClientOptions) {
    this.base = options.url.replace(/\/+$/, '');
    this.shown = redactUrl(this.base);
  }

  /** The server as messages name it: its user info (sent as basic auth) redacted. */
  get url(): string {
    return this.shown;
  }

  /** The config key of the server's settings, for errors about its answers. */
  get key(): string {
    return this.options.key;
  }

  async get<T>(route: string): Promise<T> {
    return this.request<T>('GET', route);
  }

  async post<T>(route: string, body: unknown): Promise<T> {
    return this.request<T>('POST', route, body);
  }

  private async request<T>(method: 'GET' | 'POST', route: string, body?: unknown): Promise<T> {
    const url = `${this.shown}${route}`;
    const init = {
      method,
      headers: body === undefined ? undefined : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      timeoutMs: this.options.timeoutMs,
    };
    const result = await retrying<T>(
      { retries: this.options.retries, delayMs: this.options.retryDelayMs },
      async () => {
        const answer = await fetchText(`${this.base}${route}`, init);
        if ('failure' in answer) {
          if (answer.timedOut) throw this.failure(method, url, answer.failure, answer.error, 'raise timeoutMs for longer generations');
          if (answer.code === undefined || !CONNECTION_ERRORS.has(answer.code))
            throw this.failure(method, url, answer.failure, answer.error);
          return { retry: `cannot connect (${answer.code})` };
        }
        if (answer.status >= 200 && answer.status < 300) {
          this.stats.requests++;
          return { value: this.parse<T>(method, url, answer.text) };
        }
        const reason = `HTTP ${answer.status}: ${serverMessage(answer.text)}`;
        if (answer.status !== 429 && answer.status < 500) throw this.failure(method, url, reason);
        return { retry: reason };
      },
      (failed) => {
        if (failed.willRetry) this.stats.retries++;
      },
    );
    if ('value' in result) return result.value;
    const { tries, reasons } = result.exhausted;
    throw this.failure(
      method,
      url,
      `${reasons.at(-1)} (after ${tries} tries)`,
      undefined,
      'check that the server is up and reachable from here, or raise retries',
    );
  }

  private parse<T>(method: string, url: string, text: string): T {
    try {
      return (text ? JSON.parse(text) : {}) as T;
    } catch {
      throw this.failure(method, url, `answered with something other than JSON: ${text.slice(0, 200)}`);
    }
  }

  private failure(method: string, url: string, reason: string, cause?: unknown, hint?: string): DrmasError {
    return new DrmasError('SERVICE_FAILED', `${method} ${url} failed: ${reason}`, { key: this.options.key, cause, hint });
  }
}
