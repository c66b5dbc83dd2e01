import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DrmasError } from '@drmas/core';
import { IDEMPOTENCY_HEADER } from '../client/TinkerClient.js';
import { FutureQueue, RequestFailure, type FuturePolicy } from './FutureQueue.js';
import type { TrainingModels } from './TrainingModels.js';

/** Largest request body read: a forward_backward of a few thousand tokens as JSON is far below it. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;
const KEEP_ALIVE_MS = 120_000;

export interface TinkerServerOptions {
  host: string;
  /** 0: any free port. */
  port: number;
  /** When set, requests must carry it as `X-API-Key`. */
  apiKey?: string;
  policy?: FuturePolicy;
}

type Body = Record<string, unknown>;

/**
 * The Tinker API's HTTP surface (`/api/v1/...`, the paths of the Python SDK's resources) over `TrainingModels`:
 * every training, saving and sampling request is queued and answered with a `request_id` that
 * `/api/v1/retrieve_future` polls (see FutureQueue for the answers).
 */
export class TinkerServer {
  readonly futures: FutureQueue;
  private server: Server | undefined;

  constructor(
    readonly models: TrainingModels,
    private readonly options: TinkerServerOptions,
  ) {
    this.futures = new FutureQueue(options.policy);
  }

  /** Starts listening; answers the base URL (`http://host:port`). */
  async start(): Promise<string> {
    const server = createServer((req, res) => void this.handle(req, res));
    // Longer than a client's pause between calls (a local update between two requests): Node's 5 s default closes
    // idle sockets that fetch may be about to reuse, and the request on it fails with ECONNRESET.
    server.keepAliveTimeout = KEEP_ALIVE_MS;
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          new DrmasError('INVALID_ARGUMENT', `cannot listen on ${this.options.host}:${this.options.port}: ${error.message}`, {
            key: error.code === 'EADDRINUSE' ? '--port' : '--host',
            cause: error,
            hint: error.code === 'EADDRINUSE' ? 'choose another --port, or --port 0 for a free one' : undefined,
          }),
        ),
      );
      server.listen(this.options.port, this.options.host, resolve);
    });
    const { address, port } = server.address() as AddressInfo;
    return `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (server?.listening) {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    }
    await this.models.dispose();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let status: number;
    let answer: unknown;
    try {
      if (this.options.apiKey !== undefined && req.headers['x-api-key'] !== this.options.apiKey) {
        status = 401;
        answer = { detail: 'missing or wrong X-API-Key' };
      } else {
        ({ status, body: answer } = await this.route(req));
      }
    } catch (error) {
      status = error instanceof RequestFailure ? 400 : 500;
      answer = { detail: (error as Error).message };
    }
    const text = JSON.stringify(answer);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  private async route(req: IncomingMessage): Promise<{ status: number; body: unknown }> {
    const route = `${req.method} ${new URL(req.url ?? '/', 'http://tinker').pathname.replace(/\/+$/, '')}`;
    const ok = (body: unknown) => ({ status: 200, body });
    const queue =
      (kind: string, work: (body: Body) => Promise<unknown>, concurrent = false) =>
      async () => {
        const body = await readJson(req);
        const key = req.headers[IDEMPOTENCY_HEADER];
        const id = this.futures.submit(kind, () => work(body), concurrent, typeof key === 'string' ? key : undefined);
        return ok({ request_id: id, model_id: typeof body.model_id === 'string' ? body.model_id : undefined });
      };
    const routes: Record<string, () => Promise<{ status: number; body: unknown }>> = {
      'GET /api/v1/healthz': async () => ok({ status: 'ok' }),
      'GET /api/v1/get_server_capabilities': async () =>
        ok({ supported_models: this.models.supportedModels.map((model_name) => ({ model_name })) }),
      'POST /api/v1/get_info': async () => ok(this.models.info((await readJson(req)).model_id)),
      'POST /api/v1/create_model': queue('create_model', (body) => this.models.createModel(body)),
      'POST /api/v1/forward': queue('forward', (body) =>
        this.models.forward({ model_id: body.model_id, ...(body.forward_input as Body) }, false),
      ),
      'POST /api/v1/forward_backward': queue('forward_backward', (body) =>
        this.models.forward({ model_id: body.model_id, ...(body.forward_backward_input as Body) }, true),
      ),
      'POST /api/v1/optim_step': queue('optim_step', (body) => this.models.optimStep(body)),
      'POST /api/v1/save_weights': queue('save_weights', (body) => this.models.save(body, 'weights')),
      'POST /api/v1/save_weights_for_sampler': queue('save_weights_for_sampler', (body) => this.models.save(body, 'sampler_weights')),
      'POST /api/v1/load_weights': queue('load_weights', (body) => this.models.load(body)),
      // Sampler weights are saved snapshots no later request changes: rows of concurrent requests share engine calls.
      'POST /api/v1/asample': queue('asample', (body) => this.models.sample(body), true),
      'POST /api/v1/retrieve_future': async () => this.futures.retrieve(String((await readJson(req)).request_id)),
    };
    const handler = routes[route];
    if (!handler) return { status: 404, body: { detail: `no route ${route}` } };
    return handler();
  }
}

async function readJson(req: IncomingMessage): Promise<Body> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new RequestFailure(`the request body is over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (cause) {
    throw new RequestFailure(`the request body is not JSON: ${(cause as Error).message}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new RequestFailure('the request body must be a JSON object');
  return body as Body;
}
