import { echoText } from '../errors/echoText.js';

/** A server's answer: its status and body text. */
export interface HttpAnswer {
  status: number;
  text: string;
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

/** One HTTP request with a deadline covering the body too: the answer, or why there was none. Never throws. */
export async function fetchText(url: string, init: FetchTextInit): Promise<HttpAnswer | NoAnswer> {
  try {
    const response = await (init.fetch ?? fetch)(url, {
      method: init.method,
      headers: init.headers,
      body: init.body,
      signal: AbortSignal.timeout(init.timeoutMs),
    });
    return { status: response.status, text: await response.text() };
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError') {
      return { failure: `no answer within ${init.timeoutMs} ms`, timedOut: true, error };
    }
    return { ...describeConnectionFailure(error), timedOut: false, error };
  }
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
