import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { SearchInputError } from '../errors.js';
import type { Retriever, SearchHit } from '../retrieval/Retriever.js';
import { exceedsJsonNesting } from './jsonNesting.js';
import {
  parseRetrieveRequest,
  RetrieveRequestInvalid,
  RetrieveResponseTooLarge,
  serializeRetrieveResponse,
  type RetrieveLimits,
} from './retrieveProtocol.js';
import { echoText } from '@drmas/core';

/**
 * What one client can make the server hold or send. The defaults take a Search-R1 training batch (a few thousand
 * queries at topk 3 over wiki-18 passages) and refuse what no client needs: a request of 1 MiB cannot ask for a
 * response of 58 MB, and a connection that sends nothing is dropped within seconds.
 */
export interface RetrieverServerLimits {
  /** Largest request body in bytes; a larger one is answered 413 without being read. */
  maxBodyBytes: number;
  /** Deepest nesting of arrays and objects in a request body; a Search-R1 request needs 2. */
  maxJsonDepth: number;
  /** Most queries in one request. */
  maxQueries: number;
  /** Largest `topk` a request may ask for. */
  maxTopk: number;
  /** Largest response body in bytes; a request whose response would be larger is answered 400 naming this limit. */
  maxResponseBytes: number;
  /** Open connections at once; further ones are closed as soon as they are accepted. */
  maxConnections: number;
  /** Time from a connection's first byte (or its previous response) to the end of a request's headers. */
  headersTimeoutMs: number;
  /** Time from a connection's first byte to the end of a request's body: a body that never arrives is cut off here. */
  requestTimeoutMs: number;
  /** Time a connection may stay silent (nothing read, nothing written) while a request is read or answered. */
  idleTimeoutMs: number;
  /** Time an idle keep-alive connection is kept for its next request (Node adds a 1 s grace to it). */
  keepAliveTimeoutMs: number;
  /** Requests served on one keep-alive connection before it is closed. */
  maxRequestsPerSocket: number;
  /** On `close()` (SIGINT/SIGTERM in `drmas retriever`), time given to requests in flight before connections are dropped. */
  shutdownGraceMs: number;
}

export const RETRIEVER_SERVER_LIMITS: Readonly<RetrieverServerLimits> = Object.freeze({
  maxBodyBytes: 1024 * 1024,
  maxJsonDepth: 32,
  maxQueries: 4096,
  maxTopk: 100,
  maxResponseBytes: 16 * 1024 * 1024,
  maxConnections: 256,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  idleTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxRequestsPerSocket: 1000,
  shutdownGraceMs: 10_000,
});

/** Node's timers hold at most 2^31 - 1 ms (24.8 days); a longer time-out would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** A request or response is one string in memory, and V8's strings stop at 2^29 - 24 characters (512 MiB). */
const MAX_BUFFERED_BYTES = 256 * 1024 * 1024;

/** The largest value each limit takes: beyond these Node or V8 would fail, or the depth check would not protect. */
export const RETRIEVER_LIMIT_CEILINGS: Readonly<RetrieverServerLimits> = Object.freeze({
  maxBodyBytes: MAX_BUFFERED_BYTES,
  // JSON.stringify and recursive walks of the parsed body are safe at this depth
  maxJsonDepth: 1000,
  maxQueries: 1_000_000,
  maxTopk: 1_000_000,
  maxResponseBytes: MAX_BUFFERED_BYTES,
  maxConnections: 1_000_000,
  headersTimeoutMs: MAX_TIMER_MS,
  requestTimeoutMs: MAX_TIMER_MS,
  idleTimeoutMs: MAX_TIMER_MS,
  keepAliveTimeoutMs: MAX_TIMER_MS,
  maxRequestsPerSocket: 1_000_000,
  shutdownGraceMs: MAX_TIMER_MS,
});

export interface RetrieverServerOptions extends Partial<RetrieverServerLimits> {
  retriever: Retriever;
  /** 0 (default) picks a free port; read the chosen one from `url`. */
  port?: number;
  host?: string;
  /** topk when a request gives none; default 3 (Search-R1's default). */
  defaultTopk?: number;
  /**
   * Milliseconds each `/retrieve` request waits before it is searched (default 0): a remote search API's latency
   * (hundreds of ms), to measure how a workflow copes with it. Requests wait side by side, as at a remote service.
   */
  latencyMs?: number;
}

export interface RunningRetrieverServer {
  /** Base URL, e.g. `http://127.0.0.1:40123`; the endpoint is `${url}/retrieve`. */
  url: string;
  /** The limits in force, defaults filled in. */
  limits: Readonly<RetrieverServerLimits>;
  /** Requests being read or answered now. */
  inFlight(): number;
  /**
   * Stops accepting connections, closes idle ones, lets requests in flight finish (answered with `connection:
   * close`), drops what is still open after `graceMs` (default `shutdownGraceMs`) and resolves once all are gone. A
   * second call may shorten the grace; `{ graceMs: 0 }` drops everything at once.
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

/** A request the server answers with an HTTP error status; it never leaves the server, so it is no DrmasError. */
class HttpProblem extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details: { field?: string; limit?: keyof RetrieverServerLimits; headers?: Record<string, string> } = {},
  ) {
    super(message);
  }
}

/** Longest simulated latency: a minute (a request waiting longer is no model of a search API). */
const MAX_LATENCY_MS = 60_000;

/** Longest retriever failure message passed on in a 500 (an upstream error page can be megabytes). */
const FAILURE_ECHO_CHARS = 300;

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

/** The request target's path, decoded; 400 for one that is no path (`//`, `http://[`) or has a bad %-escape (`/%`). */
function requestPath(req: IncomingMessage): string {
  const target = req.url ?? '/';
  let pathname: string;
  try {
    pathname = new URL(target, 'http://localhost').pathname;
    pathname = decodeURIComponent(pathname);
  } catch {
    throw new HttpProblem(400, `malformed request target ${JSON.stringify(echoText(target))}; use POST /retrieve or GET /health`, {
      headers: { connection: 'close' },
    });
  }
  return pathname.replace(/\/+$/, '') || '/';
}

/** JSON on the wire is UTF-8 (RFC 8259); a body that is not is refused rather than read with replacement characters. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

async function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  const tooLarge = (size: string) =>
    new HttpProblem(
      413,
      `request body of ${size} exceeds this server's limit of ${maxBytes} bytes (maxBodyBytes); send fewer queries per request`,
      {
        limit: 'maxBodyBytes',
        // the rest of the body is not read, so the connection cannot carry another request
        headers: { connection: 'close' },
      },
    );
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > maxBytes) throw tooLarge(`${echoText(declared)} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge(`more than ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  try {
    return UTF8.decode(Buffer.concat(chunks));
  } catch {
    throw new HttpProblem(400, 'body is not valid UTF-8; send JSON encoded as UTF-8', { field: 'body' });
  }
}

function parseJsonBody(text: string, maxDepth: number): unknown {
  if (exceedsJsonNesting(text, maxDepth)) {
    throw new HttpProblem(400, `body nests arrays and objects deeper than this server's limit of ${maxDepth} (maxJsonDepth)`, {
      field: 'body',
      limit: 'maxJsonDepth',
    });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new HttpProblem(400, `body is not valid JSON: ${echoText((error as Error).message)}`, { field: 'body' });
  }
}

function checkLimits(limits: RetrieverServerLimits, defaultTopk: number): void {
  for (const name of Object.keys(limits) as Array<keyof RetrieverServerLimits>) {
    const value = limits[name];
    const ceiling = RETRIEVER_LIMIT_CEILINGS[name];
    if (!Number.isSafeInteger(value) || value < 1 || value > ceiling) {
      throw new SearchInputError(name, `must be an integer from 1 to ${ceiling}, got ${value}`);
    }
  }
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new SearchInputError(
      'headersTimeoutMs',
      `${limits.headersTimeoutMs} is longer than requestTimeoutMs (${limits.requestTimeoutMs})`,
      {
        hint: 'the headers are part of the request: give headersTimeoutMs <= requestTimeoutMs',
      },
    );
  }
  if (!Number.isInteger(defaultTopk) || defaultTopk < 1 || defaultTopk > limits.maxTopk) {
    throw new SearchInputError('defaultTopk', `must be an integer from 1 to maxTopk (${limits.maxTopk}), got ${defaultTopk}`);
  }
}

/** Turns a failed `listen` into an error naming the option to change. */
function listenError(error: NodeJS.ErrnoException, host: string, port: number): SearchInputError {
  const where = `${host}:${port}`;
  switch (error.code) {
    case 'EADDRINUSE':
      return new SearchInputError('port', `${where} is already in use (EADDRINUSE)`, {
        cause: error,
        hint: 'stop what listens there, pick another port, or give port 0 for any free one',
      });
    case 'EACCES':
      return new SearchInputError('port', `not allowed to listen on ${where} (EACCES)`, {
        cause: error,
        hint: 'ports below 1024 need privileges: pick a port from 1024 to 65535, or 0 for any free one',
      });
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EADDRNOTAVAIL':
    case 'EAFNOSUPPORT':
      return new SearchInputError('host', `cannot listen on ${where}: ${error.message}`, {
        cause: error,
        hint: 'give an address of this machine: 127.0.0.1 (this machine only), 0.0.0.0 (every interface) or ::1',
      });
    default:
      return new SearchInputError('port', `cannot listen on ${where}: ${error.message}`, { cause: error });
  }
}

/**
 * Serves a `Retriever` over Search-R1's HTTP API: `POST /retrieve` and `GET /health`. Invalid requests get 400 with
 * `{"error": message, "field": name}` (and `"limit": name` when a limit refused them), an oversized body 413, an
 * unknown path 404, a wrong method 405; a retriever failure gets 500 with its message. Error messages quote at most
 * 80 characters of a bad value. Every limit is in `RetrieverServerLimits`.
 */
export async function startRetrieverServer(options: RetrieverServerOptions): Promise<RunningRetrieverServer> {
  const { retriever, port = 0, host = '127.0.0.1', defaultTopk = 3, latencyMs = 0 } = options;
  if (!Number.isInteger(latencyMs) || latencyMs < 0 || latencyMs > MAX_LATENCY_MS) {
    throw new SearchInputError('latencyMs', `must be an integer from 0 to ${MAX_LATENCY_MS}, got ${latencyMs}`);
  }
  const limits: RetrieverServerLimits = { ...RETRIEVER_SERVER_LIMITS };
  for (const key of Object.keys(limits) as Array<keyof RetrieverServerLimits>) {
    if (options[key] !== undefined) limits[key] = options[key];
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new SearchInputError('port', `must be an integer from 0 to 65535, got ${port}`);
  checkLimits(limits, defaultTopk);
  const protocolLimits: RetrieveLimits = { defaultTopk, maxTopk: limits.maxTopk, maxQueries: limits.maxQueries };
  let closing = false;
  /** Responses not yet finished: on `close()` each is told to end its connection. */
  const open = new Set<ServerResponse>();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = requestPath(req);
    if (path === '/health') {
      if (req.method !== 'GET' && req.method !== 'HEAD')
        throw new HttpProblem(405, `use GET for /health, not ${req.method}`, { headers: { allow: 'GET, HEAD' } });
      return send(res, 200, { status: 'ok' });
    }
    if (path !== '/retrieve') throw new HttpProblem(404, `no route ${req.method} ${echoText(path)}; use POST /retrieve or GET /health`);
    if (req.method !== 'POST') throw new HttpProblem(405, `use POST for /retrieve, not ${req.method}`, { headers: { allow: 'POST' } });
    const body = parseJsonBody(await readBody(req, limits.maxBodyBytes), limits.maxJsonDepth);
    const request = parseRetrieveRequest(body, protocolLimits);
    // a search may take longer than the idle timeout while the socket is rightly silent
    req.socket.setTimeout(0);
    let hits: SearchHit[][];
    try {
      if (latencyMs > 0) await delay(latencyMs);
      hits = await retriever.search(request.queries, request.topk);
    } catch (error) {
      throw new HttpProblem(
        500,
        `retriever failed: ${echoText(error instanceof Error ? error.message : String(error), FAILURE_ECHO_CHARS)}`,
      );
    } finally {
      req.socket.setTimeout(limits.idleTimeoutMs);
    }
    let text: string;
    try {
      text = serializeRetrieveResponse(hits, request.returnScores, limits.maxResponseBytes);
    } catch (error) {
      if (error instanceof RetrieveResponseTooLarge) throw new HttpProblem(400, error.message, { limit: 'maxResponseBytes' });
      throw error;
    }
    send(res, 200, text);
  };

  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // how often Node looks for requests over their time-outs: often enough that a short time-out is kept to within a quarter
      connectionsCheckingInterval: Math.min(1000, Math.max(10, Math.floor(limits.headersTimeoutMs / 4))),
    },
    (req, res) => {
      open.add(res);
      res.once('close', () => open.delete(res));
      if (closing) res.setHeader('connection', 'close');
      handle(req, res).catch((error: unknown) => {
        if (res.headersSent || res.destroyed) {
          res.destroy();
          return;
        }
        if (error instanceof RetrieveRequestInvalid) return send(res, 400, { error: error.message, field: error.field });
        if (error instanceof HttpProblem) {
          const { field, limit, headers } = error.details;
          return send(res, error.status, { error: error.message, ...(field ? { field } : {}), ...(limit ? { limit } : {}) }, headers);
        }
        // the client hung up or was cut off by a time-out while its body was read: nobody to answer
        if (req.destroyed && (error as NodeJS.ErrnoException).code === 'ECONNRESET') return;
        send(res, 500, { error: `internal error: ${echoText((error as Error).message ?? String(error), FAILURE_ECHO_CHARS)}` });
      });
    },
  );
  server.maxConnections = limits.maxConnections;
  server.maxRequestsPerSocket = limits.maxRequestsPerSocket;
  server.setTimeout(limits.idleTimeoutMs);

  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, host, port)));
    server.listen(port, host, () => {
      server.removeAllListeners('error');
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const hostForUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  let closed: Promise<void> | undefined;
  let dropTimer: NodeJS.Timeout | undefined;
  let dropAt = Infinity;
  return {
    url: `http://${hostForUrl}:${address.port}`,
    limits: Object.freeze({ ...limits }),
    inFlight: () => open.size,
    close({ graceMs = limits.shutdownGraceMs } = {}) {
      if (!closed) {
        closing = true;
        for (const res of open) if (!res.headersSent) res.setHeader('connection', 'close');
        closed = new Promise<void>((resolve) => server.close(() => resolve())).finally(() => clearTimeout(dropTimer));
        server.closeIdleConnections();
      }
      if (Date.now() + graceMs < dropAt) {
        dropAt = Date.now() + graceMs;
        clearTimeout(dropTimer);
        if (graceMs <= 0) server.closeAllConnections();
        else dropTimer = setTimeout(() => server.closeAllConnections(), graceMs);
      }
      return closed;
    },
  };
}
