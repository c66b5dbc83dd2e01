import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DrmasError } from '@drmas/core';
import { randomUUID } from 'node:crypto';
import { IDEMPOTENCY_HEADER } from '../client/TinkerClient.js';
import { decodeForwardBackward, PROTOBUF_CONTENT_TYPE } from '../client/tinkerProto.js';
import { DRMAS_SERVER_NAME } from '../client/tinkerServers.js';
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
  /** A session without a heartbeat this long is dropped with its models (SkyRL's session_timeout_sec, 300 s). */
  sessionTimeoutMs?: number;
}

/** SkyRL's default `session_timeout_sec`. */
export const SESSION_TIMEOUT_MS = 300_000;

/** A client's session: its last heartbeat, and the models created in it. */
interface Session {
  lastHeartbeat: number;
  models: Set<string>;
}

/** An HTTP answer the route gives at once (not a failed future): 404 for an unknown session or model, as SkyRL. */
class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

type Body = Record<string, unknown>;

/**
 * The Tinker API's HTTP surface (`/api/v1/...`, the paths of the Python SDK's resources) over `TrainingModels`:
 * every training, saving and sampling request is queued and answered with a `request_id` that
 * `/api/v1/retrieve_future` polls (see FutureQueue for the answers). As SkyRL tx does (skyrl/tinker/api.py, skyrl
 * 0.3.0 and NovaSky-AI/SkyRL a9564572): `create_model` needs a session from `create_session` (404 "Session not
 * found"), a session without a heartbeat for `sessionTimeoutMs` is dropped with its models, requests on an unknown
 * model answer 404, a request sent again under the same `(model_id, seq_id)` gets its first future (SkyRL main's
 * `create_future`). As hosted Tinker's SDK 0.38 sends them: a protobuf `forward_backward` (`forward_only` for a
 * forward), and sampling sessions (`save_weights_for_sampler` with `sampling_session_seq_id`, then `asample` with
 * `sampling_session_id`).
 */
export class TinkerServer {
  readonly futures: FutureQueue;
  private server: Server | undefined;
  private readonly sessions = new Map<string, Session>();
  /** Sampling session id → the sampler weights' tinker path. */
  private readonly samplingSessions = new Map<string, string>();
  private sweeper: NodeJS.Timeout | undefined;

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
    const timeout = this.options.sessionTimeoutMs ?? SESSION_TIMEOUT_MS;
    this.sweeper = setInterval(() => this.dropStaleSessions(), Math.min(60_000, Math.max(10, timeout / 2)));
    this.sweeper.unref();
    const { address, port } = server.address() as AddressInfo;
    return `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
  }

  /** Models of sessions whose last heartbeat is older than the timeout are unloaded (SkyRL's cleanup_stale_sessions). */
  dropStaleSessions(now = Date.now()): string[] {
    const timeout = this.options.sessionTimeoutMs ?? SESSION_TIMEOUT_MS;
    const dropped: string[] = [];
    for (const [id, session] of this.sessions) {
      if (now - session.lastHeartbeat <= timeout) continue;
      for (const model of session.models) this.models.unload(model);
      this.sessions.delete(id);
      dropped.push(id);
    }
    return dropped;
  }

  async stop(): Promise<void> {
    clearInterval(this.sweeper);
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
      status = error instanceof Refusal ? error.status : error instanceof RequestFailure ? 400 : 500;
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
        const body = await readBody(req);
        return ok(this.enqueue(req, kind, body, () => work(body), concurrent));
      };
    const routes: Record<string, () => Promise<{ status: number; body: unknown }>> = {
      'GET /api/v1/healthz': async () => ok({ status: 'ok', server: DRMAS_SERVER_NAME }),
      'GET /api/v1/get_server_capabilities': async () =>
        ok({ supported_models: this.models.supportedModels.map((model_name) => ({ model_name })) }),
      'POST /api/v1/create_session': async () => {
        await readBody(req);
        const id = `session_${randomUUID().slice(0, 8)}`;
        this.sessions.set(id, { lastHeartbeat: Date.now(), models: new Set() });
        return ok({ session_id: id, type: 'create_session' });
      },
      'POST /api/v1/session_heartbeat': async () => {
        this.session((await readBody(req)).session_id).lastHeartbeat = Date.now();
        return ok({ type: 'session_heartbeat' });
      },
      'POST /api/v1/get_info': async () => ok(this.models.info((await readBody(req)).model_id)),
      'POST /api/v1/create_model': async () => {
        const body = await readBody(req);
        const session = this.session(body.session_id);
        const created = this.enqueue(req, 'create_model', body, async () => {
          const answer = await this.models.createModel(body);
          session.models.add(answer.model_id);
          return answer;
        });
        return ok(created);
      },
      'POST /api/v1/forward': queue('forward', (body) =>
        this.models.forward({ model_id: body.model_id, ...(body.forward_input as Body) }, false),
      ),
      'POST /api/v1/forward_backward': queue('forward_backward', (body) =>
        this.models.forward({ model_id: body.model_id, ...(body.forward_backward_input as Body) }, body.forward_only !== true),
      ),
      'POST /api/v1/optim_step': queue('optim_step', (body) => this.models.optimStep(body)),
      'POST /api/v1/save_weights': queue('save_weights', (body) => this.models.save(body, 'weights')),
      'POST /api/v1/save_weights_for_sampler': queue('save_weights_for_sampler', (body) => this.saveForSampler(body)),
      'POST /api/v1/load_weights': queue('load_weights', (body) => this.models.load(body)),
      // Sampler weights are saved snapshots no later request changes: rows of concurrent requests share engine calls.
      'POST /api/v1/asample': queue('asample', (body) => this.models.sample(this.samplingTarget(body)), true),
      'POST /api/v1/retrieve_future': async () => this.futures.retrieve(String((await readBody(req)).request_id)),
    };
    const handler = routes[route];
    if (!handler) return { status: 404, body: { detail: `no route ${route}` } };
    return handler();
  }

  /**
   * Queues `work` under the request's keys (its idempotency key, and `(model_id, seq_id)` when it names both) and
   * answers its future; a request on a model that does not exist (or was unloaded) is a 404 at once, as SkyRL's.
   */
  private enqueue(req: IncomingMessage, kind: string, body: Body, work: () => Promise<unknown>, concurrent = false): unknown {
    if (body.model_id !== undefined && kind !== 'create_model') {
      try {
        this.models.info(body.model_id);
      } catch {
        throw new Refusal(404, `Model ${JSON.stringify(body.model_id)} not found`);
      }
    }
    const keys: string[] = [];
    const idempotency = req.headers[IDEMPOTENCY_HEADER];
    if (typeof idempotency === 'string') keys.push(`key:${idempotency}`);
    if (typeof body.model_id === 'string' && typeof body.seq_id === 'number') keys.push(`seq:${body.model_id}:${body.seq_id}`);
    const id = this.futures.submit(kind, work, concurrent, keys);
    return { request_id: id, model_id: typeof body.model_id === 'string' ? body.model_id : undefined };
  }

  private session(id: unknown): Session {
    const session = typeof id === 'string' ? this.sessions.get(id) : undefined;
    if (!session) throw new Refusal(404, 'Session not found');
    return session;
  }

  /**
   * `save_weights_for_sampler`: under the request's `path`, or (hosted Tinker's form, no path) as a new sampling
   * session `ss<sampling_session_seq_id>_seq<seq_id>` (SkyRL main's name for it), whose id `asample` then takes.
   */
  private async saveForSampler(body: Body): Promise<unknown> {
    if (body.path !== undefined || typeof body.sampling_session_seq_id !== 'number') return this.models.save(body, 'sampler_weights');
    const name = `ss${body.sampling_session_seq_id}_seq${typeof body.seq_id === 'number' ? body.seq_id : 0}`;
    const saved = await this.models.save({ ...body, path: name }, 'sampler_weights');
    const samplingSessionId = `sampling_${randomUUID().slice(0, 8)}`;
    this.samplingSessions.set(samplingSessionId, saved.path);
    return { ...saved, sampling_session_id: samplingSessionId };
  }

  /** An `asample` body with its sampling session (and seq_id) turned into the sampler weights' path. */
  private samplingTarget(body: Body): Body {
    if (body.sampling_session_id === undefined) return body;
    const modelPath = typeof body.sampling_session_id === 'string' ? this.samplingSessions.get(body.sampling_session_id) : undefined;
    if (!modelPath) throw new RequestFailure(`no sampling session ${JSON.stringify(body.sampling_session_id)}`);
    if (typeof body.seq_id !== 'number') throw new RequestFailure("'seq_id' must be provided when 'sampling_session_id' is used");
    return { ...body, model_path: modelPath };
  }
}

/** A JSON body, or a protobuf `forward_backward` (hosted Tinker's SDK) as the JSON wire's fields. */
async function readBody(req: IncomingMessage): Promise<Body> {
  if (req.headers['content-type'] !== PROTOBUF_CONTENT_TYPE) return readJson(req);
  let message: ReturnType<typeof decodeForwardBackward>;
  try {
    message = decodeForwardBackward(await readBytes(req));
  } catch (cause) {
    throw new RequestFailure(`the protobuf body is not a tinker_public.ForwardBackwardRequest: ${(cause as Error).message}`);
  }
  return {
    model_id: message.model_id,
    seq_id: message.seq_id,
    forward_only: message.forward_only,
    forward_backward_input: { data: message.data, loss_fn: message.loss_fn },
  };
}

async function readBytes(req: IncomingMessage): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new RequestFailure(`the request body is over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function readJson(req: IncomingMessage): Promise<Body> {
  const text = Buffer.from(await readBytes(req)).toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (cause) {
    throw new RequestFailure(`the request body is not JSON: ${(cause as Error).message}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new RequestFailure('the request body must be a JSON object');
  return body as Body;
}
