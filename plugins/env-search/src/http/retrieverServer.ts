import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SearchEnvError, SearchInputError } from '../errors.js';
import type { Retriever } from '../retrieval/Retriever.js';
import { formatRetrieveResponse, parseRetrieveRequest, RetrieveRequestInvalid, type RetrieveLimits } from './retrieveProtocol.js';

export interface RetrieverServerOptions {
  retriever: Retriever;
  /** 0 (default) picks a free port; read the chosen one from `url`. */
  port?: number;
  host?: string;
  /** topk when a request gives none; default 3 (Search-R1's default). */
  defaultTopk?: number;
  maxTopk?: number;
  maxQueries?: number;
  /** Largest accepted request body in bytes; default 16 MiB. */
  maxBodyBytes?: number;
}

export interface RunningRetrieverServer {
  /** Base URL, e.g. `http://127.0.0.1:40123`; the endpoint is `${url}/retrieve`. */
  url: string;
  /** Stops accepting requests, drops open connections and resolves once the port is free. */
  close(): Promise<void>;
}

/** A request the server answers with an HTTP error status; it never leaves the server, so it is no DrmasError. */
class HttpProblem extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new HttpProblem(413, `request body exceeds ${maxBytes} bytes; send fewer queries per request`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new HttpProblem(400, `body is not valid JSON: ${(error as Error).message}`, 'body');
  }
}

/**
 * Serves a `Retriever` over Search-R1's HTTP API: `POST /retrieve` and `GET /health`. Invalid requests get 400 with
 * `{"error": message, "field": name}`; a retriever failure gets 500 with its message.
 */
export async function startRetrieverServer(options: RetrieverServerOptions): Promise<RunningRetrieverServer> {
  const {
    retriever,
    port = 0,
    host = '127.0.0.1',
    defaultTopk = 3,
    maxTopk = 1000,
    maxQueries = 10000,
    maxBodyBytes = 16 * 1024 * 1024,
  } = options;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new SearchInputError('port', `must be an integer from 0 to 65535, got ${port}`);
  const limits: RetrieveLimits = { defaultTopk, maxTopk, maxQueries };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname.replace(/\/+$/, '') || '/';
    if (path === '/health') {
      if (req.method !== 'GET') return send(res, 405, { error: `use GET for ${path}` }, { allow: 'GET' });
      return send(res, 200, { status: 'ok' });
    }
    if (path !== '/retrieve') {
      return send(res, 404, { error: `no route ${req.method} ${path}; use POST /retrieve or GET /health` });
    }
    if (req.method !== 'POST') return send(res, 405, { error: `use POST for /retrieve, not ${req.method}` }, { allow: 'POST' });
    const request = parseRetrieveRequest(await readJsonBody(req, maxBodyBytes), limits);
    let hits;
    try {
      hits = await retriever.search(request.queries, request.topk);
    } catch (error) {
      throw new HttpProblem(500, `retriever failed: ${(error as Error).message}`);
    }
    send(res, 200, formatRetrieveResponse(hits, request.returnScores));
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (error instanceof RetrieveRequestInvalid) send(res, 400, { error: error.message, field: error.field });
      else if (error instanceof HttpProblem)
        send(res, error.status, { error: error.message, ...(error.field ? { field: error.field } : {}) });
      else send(res, 500, { error: `internal error: ${(error as Error).message}` });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) =>
      reject(
        new SearchEnvError('INVALID_ARGUMENT', `retriever server cannot listen on ${host}:${port}: ${error.message}`, {
          cause: error,
          hint: 'pick another port, or 0 for any free one',
        }),
      ),
    );
    server.listen(port, host, () => {
      server.removeAllListeners('error');
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const hostForUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${hostForUrl}:${address.port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
