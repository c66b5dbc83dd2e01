import { setTimeout as sleep } from 'node:timers/promises';
import { DrmasError } from '@drmas/core';

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

/** The server's own words on a failed request: OpenAI's `error.message`, SGLang's `message`, FastAPI's `detail`, or the text. */
function serverMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown; detail?: unknown };
    const message = typeof body.error === 'object' ? body.error?.message : (body.error ?? body.message ?? body.detail);
    if (message !== undefined) return typeof message === 'string' ? message : JSON.stringify(message);
  } catch {
    // not JSON: the text itself
  }
  return text.slice(0, 300);
}

/** Why a fetch threw without an answer: the system error's code when it has one (fetch wraps it as `cause`). */
function connectionCode(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}

/**
 * JSON over HTTP to one inference server, with a timeout per request and bounded retries of what retrying can fix
 * (a refused or reset connection, a 5xx, a 429). Every failure is a SERVICE_FAILED naming the URL, at the config key.
 */
export class ServerClient {
  readonly stats: ServerClientStats = { requests: 0, retries: 0 };
  private readonly base: string;

  constructor(private readonly options: ServerClientOptions) {
    this.base = options.url.replace(/\/+$/, '');
  }

  get url(): string {
    return this.base;
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
    const url = `${this.base}${route}`;
    let wait = this.options.retryDelayMs;
    for (let attempt = 0; ; attempt++) {
      let reason: string;
      try {
        const response = await fetch(url, {
          method,
          headers: body === undefined ? undefined : { 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(this.options.timeoutMs),
        });
        const text = await response.text();
        if (response.ok) {
          this.stats.requests++;
          return this.parse<T>(method, url, text);
        }
        reason = `HTTP ${response.status}: ${serverMessage(text)}`;
        if (response.status !== 429 && response.status < 500) throw this.failure(method, url, reason);
      } catch (error) {
        if (DrmasError.is(error)) throw error;
        const name = (error as Error).name;
        if (name === 'TimeoutError' || name === 'AbortError') {
          throw this.failure(method, url, `no answer within ${this.options.timeoutMs} ms`, error, 'raise timeoutMs for longer generations');
        }
        const code = connectionCode(error);
        if (code === undefined || !CONNECTION_ERRORS.has(code)) {
          const cause = (error as { cause?: { message?: unknown } }).cause?.message;
          throw this.failure(method, url, `${(error as Error).message}${typeof cause === 'string' ? `: ${cause}` : ''}`, error);
        }
        reason = `cannot connect (${code})`;
      }
      if (attempt >= this.options.retries) {
        throw this.failure(
          method,
          url,
          `${reason} (after ${attempt + 1} tries)`,
          undefined,
          'check that the server is up and reachable from here, or raise retries',
        );
      }
      this.stats.retries++;
      await sleep(wait);
      wait *= 2;
    }
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
