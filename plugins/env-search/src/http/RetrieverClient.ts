import {
  RetrieverRequestError,
  RetrieverResponseError,
  RetrieverUnavailableError,
  SearchInputError,
  type RetrieveAttemptFailure,
} from '../errors.js';
import type { Retriever, SearchHit } from '../retrieval/Retriever.js';
import { readRetrieveResponse } from './retrieveProtocol.js';
import { credentialsFromUrl, describeConnectionFailure, isTransientStatus, redactUrl, retrying, serverMessage } from '@drmas/core';

export interface RetrieverClientOptions {
  /** Retriever servers, used in turn. A base URL (`http://host:8000`) gets `/retrieve` appended; a URL with a path is used as is. */
  urls: string[];
  /** Limit per attempt, covering connect, request and response body; default 60000. */
  timeoutMs?: number;
  /** Largest response body read, in bytes; a larger one fails the request (it is not retried); default 64 MiB. */
  maxResponseBytes?: number;
  /** Further attempts after the first fails with 5xx, 408, 429, a connection error or a time-out; default 10. */
  maxRetries?: number;
  /** Wait before the first retry; doubles on each later one; default 500. */
  backoffMs?: number;
  /** Longest wait between attempts; default 10000. */
  maxBackoffMs?: number;
  /** Each wait is scaled by a random factor in [1 - jitter, 1 + jitter], so many clients do not retry in step; default 0.1. */
  jitter?: number;
  /** Replaces the global `fetch` (tests, proxies). */
  fetch?: typeof fetch;
  /** Called after each failed attempt that will be retried or ends the request (logging, metrics). */
  onAttemptFailed?: (failure: RetrieveAttemptFailure & { willRetry: boolean; delayMs: number }) => void;
}

/** A retriever's `/retrieve` endpoint: where requests go, the basic auth its URL's user info stands for, and how messages name it. */
interface Endpoint {
  url: string;
  authorization?: string;
  shown: string;
}

function endpointOf(url: string, index: number): Endpoint {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new SearchInputError(`urls[${index}]`, `"${redactUrl(url)}" is not a URL; expected e.g. http://127.0.0.1:8000/retrieve`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new SearchInputError(`urls[${index}]`, `"${redactUrl(url)}" must use http or https`);
  }
  if (parsed.pathname === '/' || parsed.pathname === '') parsed.pathname = '/retrieve';
  const endpoint = credentialsFromUrl(parsed.toString());
  return { ...endpoint, shown: redactUrl(endpoint.url) };
}

/** A response body over the client's limit; `bytes` is what was seen before reading stopped (or the declared length). */
class BodyTooLarge {
  constructor(readonly bytes: number) {}
}

/** Reads a response body as UTF-8 text, stopping once it is known to exceed `maxBytes`. */
async function readBodyText(response: Response, maxBytes: number): Promise<string | BodyTooLarge> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body?.cancel();
    return new BodyTooLarge(declared);
  }
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > maxBytes) return new BodyTooLarge(size);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Client of Search-R1's retriever HTTP API (`POST /retrieve`). Requests go to the URLs in turn (round-robin across
 * calls, and each retry moves on to the next URL). Server errors, refused connections and time-outs are retried with
 * exponential backoff; a 4xx answer fails at once with the server's message.
 */
export class RetrieverClient implements Retriever {
  private readonly endpoints: Endpoint[];
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly maxRetries: number;
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly jitter: number;
  private readonly fetchFn: typeof fetch;
  private readonly onAttemptFailed: RetrieverClientOptions['onAttemptFailed'];
  private nextUrl = 0;

  constructor(options: RetrieverClientOptions) {
    const {
      urls,
      timeoutMs = 60000,
      maxResponseBytes = 64 * 1024 * 1024,
      maxRetries = 10,
      backoffMs = 500,
      maxBackoffMs = 10000,
      jitter = 0.1,
    } = options;
    if (!Array.isArray(urls) || urls.length === 0)
      throw new SearchInputError('urls', 'give at least one retriever URL, e.g. http://127.0.0.1:8000/retrieve');
    this.endpoints = urls.map(endpointOf);
    const check = (name: string, value: number, ok: boolean): number => {
      if (!ok) throw new SearchInputError(name, `invalid value ${value}`);
      return value;
    };
    this.timeoutMs = check('timeoutMs', timeoutMs, Number.isFinite(timeoutMs) && timeoutMs > 0 && timeoutMs < 2 ** 31);
    this.maxResponseBytes = check('maxResponseBytes', maxResponseBytes, Number.isSafeInteger(maxResponseBytes) && maxResponseBytes > 0);
    this.maxRetries = check('maxRetries', maxRetries, Number.isInteger(maxRetries) && maxRetries >= 0);
    this.backoffMs = check('backoffMs', backoffMs, Number.isFinite(backoffMs) && backoffMs >= 0);
    this.maxBackoffMs = check('maxBackoffMs', maxBackoffMs, Number.isFinite(maxBackoffMs) && maxBackoffMs >= 0);
    this.jitter = check('jitter', jitter, jitter >= 0 && jitter <= 1);
    this.fetchFn = options.fetch ?? fetch;
    this.onAttemptFailed = options.onAttemptFailed;
  }

  /** The `/retrieve` endpoints, in round-robin order (without their user info, which goes as basic auth). */
  get urls(): readonly string[] {
    return this.endpoints.map((endpoint) => endpoint.url);
  }

  search(queries: string[], topk: number): Promise<SearchHit[][]> {
    return this.retrieve(queries, topk);
  }

  async retrieve(queries: string[], topk: number): Promise<SearchHit[][]> {
    if (!Array.isArray(queries) || queries.some((q) => typeof q !== 'string'))
      throw new SearchInputError('queries', 'must be a list of strings');
    if (!Number.isInteger(topk) || topk < 1) throw new SearchInputError('topk', `must be an integer >= 1, got ${topk}`);
    if (queries.length === 0) return [];
    const body = JSON.stringify({ queries, topk, return_scores: true });
    const failures: RetrieveAttemptFailure[] = [];
    const schedule = { retries: this.maxRetries, delayMs: this.backoffMs, maxDelayMs: this.maxBackoffMs, jitter: this.jitter };
    const result = await retrying<SearchHit[][]>(
      schedule,
      async (attempt) => {
        const endpoint = this.endpoints[this.nextUrl]!;
        this.nextUrl = (this.nextUrl + 1) % this.endpoints.length;
        const outcome = await this.attempt(endpoint, body, queries.length);
        if (typeof outcome !== 'string') return { value: outcome };
        failures.push({ attempt, url: endpoint.shown, reason: outcome });
        return { retry: outcome };
      },
      (failed) => this.onAttemptFailed?.({ ...failed, url: failures.at(-1)!.url }),
    );
    if ('value' in result) return result.value;
    throw new RetrieverUnavailableError(failures);
  }

  /** Hits on success; the reason for a retryable failure as a string; throws on failures retrying cannot fix. */
  private async attempt(endpoint: Endpoint, body: string, queryCount: number): Promise<SearchHit[][] | string> {
    const url = endpoint.shown;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutMs);
    let status: number;
    let text: string | BodyTooLarge;
    try {
      const response = await this.fetchFn(endpoint.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(endpoint.authorization ? { authorization: endpoint.authorization } : {}) },
        body,
        signal: controller.signal,
      });
      status = response.status;
      text = await readBodyText(response, this.maxResponseBytes);
    } catch (error) {
      return timedOut ? `timed out after ${this.timeoutMs} ms` : describeConnectionFailure(error).failure;
    } finally {
      clearTimeout(timer);
      // stops a body left unread (one over the limit) from holding the connection
      controller.abort();
    }
    const retryable = isTransientStatus(status);
    if (text instanceof BodyTooLarge) {
      const problem = `${text.bytes} bytes or more, over this client's limit of ${this.maxResponseBytes} bytes (maxResponseBytes)`;
      if (retryable) return `HTTP ${status} with a body of ${problem}`;
      throw new RetrieverResponseError(url, problem, {
        what: `sent a response too large to read (HTTP ${status})`,
        hint: 'ask for fewer documents (topk) or send fewer queries per request, or raise maxResponseBytes',
      });
    }
    if (retryable) return `HTTP ${status}: ${serverMessage(text)}`;
    if (status < 200 || status >= 300) throw new RetrieverRequestError(url, status, serverMessage(text));
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new RetrieverResponseError(url, `body is not JSON (${serverMessage(text)})`);
    }
    const hits = readRetrieveResponse(parsed, queryCount);
    if (typeof hits === 'string') throw new RetrieverResponseError(url, hits);
    return hits;
  }
}
