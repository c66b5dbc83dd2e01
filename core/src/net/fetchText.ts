import { echoText } from '../errors/echoText.js';

/** A server's answer: its status and body text. */
export interface HttpAnswer {
  status: number;
  text: string;
  /** The wait the server asked for with `Retry-After` (seconds or an HTTP date), in milliseconds, when it gave one. */
  retryAfterMs?: number;
}

/** A request that got no answer: timed out, or the connection failed (`code`, e.g. ECONNREFUSED, when the system gave one). */
export interface NoAnswer {
  failure: string;
  timedOut: boolean;
  code?: string;
  error: unknown;
}

export interface FetchTextInit {
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** Text, or bytes (a protobuf body). */
  body?: string | Uint8Array;
  timeoutMs: number;
  /** The fetch to use (a test's counting wrapper); the global one by default. */
  fetch?: typeof fetch;
}

/**
 * A URL's user info as what HTTP clients send for it: `url` without it (fetch refuses a URL carrying credentials, and
 * its error would quote them) and the basic `Authorization` header it stands for, percent-decoded, as curl and
 * Python's requests send it (`http://user:pw@host` -> `Basic dXNlcjpwdw==`). A URL without user info comes back as is.
 */
export function credentialsFromUrl(url: string): { url: string; authorization?: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url };
  }
  if (!parsed.username && !parsed.password) return { url };
  const user = `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`;
  parsed.username = '';
  parsed.password = '';
  return { url: parsed.href, authorization: `Basic ${Buffer.from(user).toString('base64')}` };
}

/**
 * One HTTP request with a deadline covering the body too: the answer, or why there was none. Never throws. User info in
 * `url` goes as basic auth, unless `headers` has an `authorization` of its own.
 */
export async function fetchText(url: string, init: FetchTextInit): Promise<HttpAnswer | NoAnswer> {
  const target = credentialsFromUrl(url);
  const ownAuthorization = Object.keys(init.headers ?? {}).some((name) => name.toLowerCase() === 'authorization');
  const headers = target.authorization && !ownAuthorization ? { ...init.headers, authorization: target.authorization } : init.headers;
  try {
    const response = await (init.fetch ?? fetch)(target.url, {
      method: init.method,
      headers,
      body: init.body,
      signal: AbortSignal.timeout(init.timeoutMs),
    });
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
    return { status: response.status, text: await response.text(), ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError') {
      return { failure: `no answer within ${init.timeoutMs} ms`, timedOut: true, error };
    }
    return { ...describeConnectionFailure(error), timedOut: false, error };
  }
}

/** A `Retry-After` header's wait in milliseconds: delay-seconds or an HTTP date (RFC 9110 10.2.3); undefined when absent or unreadable. */
export function parseRetryAfter(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.round(seconds * 1000) : undefined;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Why a fetch threw without an answer: the system error's code and message when it has them (fetch wraps it as `cause`). */
export function describeConnectionFailure(error: unknown): { failure: string; code?: string } {
  const err = error as Error & { cause?: { code?: unknown; message?: unknown } };
  const code = typeof err.cause?.code === 'string' ? err.cause.code : undefined;
  const causeMessage = typeof err.cause?.message === 'string' ? err.cause.message : undefined;
  const detail = code || causeMessage ? [code, causeMessage].filter(Boolean).join(': ') : err.message;
  return { failure: `connection failed (${detail})`, ...(code ? { code } : {}) };
}

/** Statuses a retry may fix: too many requests, request timeout, and server errors. */
export function isTransientStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/**
 * What a server said in an error body, for a message: the `error` (or `error.message`), `message` or `detail` field of
 * a JSON body, else the text itself, cut by `echoText`.
 */
export function serverMessage(text: string, maxChars = 300): string {
  let said: unknown;
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown; detail?: unknown };
    said = typeof body.error === 'object' && body.error !== null ? body.error.message : (body.error ?? body.message ?? body.detail);
  } catch {
    // not JSON: the text itself
  }
  const message = said === undefined ? text : typeof said === 'string' ? said : JSON.stringify(said);
  return echoText(message, maxChars) || '(empty body)';
}
