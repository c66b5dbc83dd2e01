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
  /** Sent as `Authorization: Bearer <key>` (vLLM's and SGLang's `--api-key`), when set. */
  apiKey?: string;
}

export interface RequestOptions {
  /**
   * Whether a 5xx is tried again (default true). False for a call whose 500 is the server's answer, not a passing
   * failure: vLLM answers a worker method's exception (an old `reload_weights` without `weights_path`) with a 500.
   */
  retryServerErrors?: boolean;
}

export interface ServerClientStats {
  /** Requests answered with a 2xx. */
  requests: number;
  /** Retries made (connection errors, 5xx, 429). */
  retries: number;
}

const UNAUTHORIZED_HINT =
  'the server was started with --api-key: put the key in an environment variable and name it in models.<id>.rollout.apiKeyEnv';

/** Error codes of a connection that never carried an answer: safe to retry, since the server did no work. */
const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'UND_ERR_SOCKET']);

/**
 * The API key in the environment variable `name` (`models.<id>.rollout.apiKeyEnv`); undefined when no variable is
 * named. A named variable that is unset or empty is a CONFIG_INVALID: a keyed server would refuse every request.
 */
export function apiKeyFromEnv(name: string | undefined, key: string): string | undefined {
  if (name === undefined) return undefined;
  const value = process.env[name];
  if (!value) {
    throw new DrmasError('CONFIG_INVALID', `${key}.apiKeyEnv names the environment variable ${name}, which is not set`, {
      key: `${key}.apiKeyEnv`,
      hint: `export ${name}=<the key the server was started with (--api-key)>, or remove apiKeyEnv for a server without a key`,
    });
  }
  return value;
}

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
    return (await this.request<T>('GET', route)).value;
  }

  async post<T>(route: string, body: unknown, options: RequestOptions = {}): Promise<T> {
    return (await this.request<T>('POST', route, body, options)).value;
  }

  /** `GET route`, or undefined where the server answers 404 (a route this server's version or mode lacks). */
  async getIfServed<T>(route: string): Promise<T | undefined> {
    const answer = await this.request<T>('GET', route, undefined, {}, true);
    return 'missing' in answer ? undefined : answer.value;
  }

  /** `POST route`, or `{ missing }` with the server's words where it answers 404. */
  async postIfServed<T>(route: string, body: unknown): Promise<{ value: T } | { missing: string }> {
    return this.request<T>('POST', route, body, {}, true);
  }

  private request<T>(method: 'GET' | 'POST', route: string, body?: unknown, options?: RequestOptions): Promise<{ value: T }>;
  private request<T>(
    method: 'GET' | 'POST',
    route: string,
    body: unknown,
    options: RequestOptions,
    notFoundIsAnswer: true,
  ): Promise<{ value: T } | { missing: string }>;
  private async request<T>(
    method: 'GET' | 'POST',
    route: string,
    body?: unknown,
    options: RequestOptions = {},
    notFoundIsAnswer = false,
  ): Promise<{ value: T } | { missing: string }> {
    const url = `${this.shown}${route}`;
    const headers: Record<string, string> = {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
    };
    const init = {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      timeoutMs: this.options.timeoutMs,
    };
    const retryServerErrors = options.retryServerErrors ?? true;
    const result = await retrying<{ value: T } | { missing: string }>(
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
          return { value: { value: this.parse<T>(method, url, answer.text) } };
        }
        const reason = `HTTP ${answer.status}: ${serverMessage(answer.text)}`;
        if (answer.status === 404 && notFoundIsAnswer) return { value: { missing: serverMessage(answer.text) } };
        if (answer.status === 401 || answer.status === 403) throw this.failure(method, url, reason, undefined, UNAUTHORIZED_HINT);
        if (answer.status >= 500 && !retryServerErrors) throw this.failure(method, url, reason);
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
