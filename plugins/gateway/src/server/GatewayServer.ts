import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DrmasError } from '@drmas/core';
import { Sessions, SessionError } from '../capture/Sessions.js';
import type { ServedModels } from '../engine/ServedModels.js';
import { chatCompletion, textCompletion, type CallContext, type ResponseSink } from './completions.js';
import { OpenAiError } from './OpenAiError.js';
import { parseChatRequest, parseCompletionRequest } from './openAiRequests.js';
import { sglangGenerate } from './sglangGenerate.js';
import { WeightReloads } from '../engine/WeightReloads.js';

/** Largest request body read (a long conversation is well below it). */
const MAX_BODY_BYTES = 8 * 1024 * 1024;
/** Header naming the capture session of a call sent to the plain `/v1/...` paths. */
export const SESSION_HEADER = 'x-drmas-session';
/** Header naming the agent role a call is recorded under. */
export const AGENT_HEADER = 'x-drmas-agent';

const SESSION_ID = /^sess-[0-9a-f-]{36}$/;

export interface GatewayServerOptions {
  host: string;
  /** 0: any free port. */
  port: number;
  /** A capture session untouched this long is freed (default `DEFAULT_SESSION_IDLE_MS`). */
  sessionIdleMs?: number;
}

/**
 * The gateway's HTTP server (node:http): OpenAI's `/v1/models`, `/v1/chat/completions` and `/v1/completions`, and
 * AReaL's session routes. A call belongs to a capture session when its path starts with the session's id
 * (`/<session>/v1/chat/completions`, the base URL AReaL hands an agent) or when it carries `x-drmas-session`.
 */
/** How long an idle keep-alive connection stays open: longer than a trainer's update between two rollouts. */
const KEEP_ALIVE_MS = 120_000;

export class GatewayServer {
  readonly sessions: Sessions;
  /** Weight reloads from disk (vLLM's and SGLang's routes) and the version they set. */
  readonly weights: WeightReloads;
  private server: Server | undefined;

  constructor(
    readonly models: ServedModels,
    private readonly options: GatewayServerOptions,
  ) {
    this.sessions = new Sessions(options.sessionIdleMs);
    this.weights = new WeightReloads(models);
  }

  /** Starts listening; answers the base URL (`http://host:port`, no trailing slash). */
  async start(): Promise<string> {
    // Node's 5 s keep-alive lets an idle connection close while an agent's client, in this busy process, reuses it
    // (ECONNRESET); a minute outlasts any client's idle pool (undici keeps one a second less than this hint).
    const server = createServer(
      { keepAliveTimeout: KEEP_ALIVE_MS, headersTimeout: KEEP_ALIVE_MS + 1000 },
      (req, res) => void this.handle(req, res),
    );
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) => {
        const taken = error.code === 'EADDRINUSE';
        reject(
          new DrmasError(
            'INVALID_ARGUMENT',
            taken
              ? `port ${this.options.port} on ${this.options.host} is in use`
              : `cannot listen on ${this.options.host}:${this.options.port}: ${error.message}`,
            {
              key: taken ? '--port' : '--host',
              cause: error,
              hint: taken ? 'choose another --port, or --port 0 for a free one' : undefined,
            },
          ),
        );
      });
      server.listen(this.options.port, this.options.host, resolve);
    });
    const { address, port } = server.address() as AddressInfo;
    return `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
  }

  /** Stops listening and drops open connections (streams in flight end). */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server?.listening) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const sink = responseSink(res);
    try {
      await this.route(req, sink);
    } catch (error) {
      const answer = error instanceof SessionError ? sessionAnswer(error) : OpenAiError.from(error);
      if (res.headersSent) {
        // Mid-stream: OpenAI's clients read an `error` event and stop.
        sink.event(answer.body());
        sink.done();
      } else {
        send(res, answer.status, answer.body());
      }
    }
  }

  private async route(req: IncomingMessage, out: ResponseSink): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://gateway');
    const parts = url.pathname.split('/').filter(Boolean);
    let sessionId = headerValue(req, SESSION_HEADER);
    if (parts[0] && SESSION_ID.test(parts[0])) sessionId = parts.shift();
    if (parts[0] === 'v1') parts.shift();
    const route = `${req.method} /${parts.join('/')}`;
    switch (route) {
      case 'GET /models':
        return out.json({
          object: 'list',
          data: this.models.all().map((m) => ({ id: m.name, object: 'model', created: 0, owned_by: 'drmas', root: m.modelId })),
        });
      case 'POST /chat/completions':
      case 'POST /completions': {
        const body = await readJson(req);
        const chat = route === 'POST /chat/completions';
        const request = chat ? parseChatRequest(body) : parseCompletionRequest(body);
        const call = this.callContext(request.model, headerValue(req, AGENT_HEADER), sessionId);
        try {
          if (chat) await chatCompletion(call, request as ReturnType<typeof parseChatRequest>, out);
          else await textCompletion(call, request as ReturnType<typeof parseCompletionRequest>, out);
        } finally {
          if (call.session) this.sessions.release(call.session);
        }
        return;
      }
      case 'POST /rl/start_session': {
        const body = (await readJson(req, true)) as { task_id?: unknown };
        if (body.task_id !== undefined && body.task_id !== null && typeof body.task_id !== 'string') {
          throw new SessionError(400, 'task_id must be a string', 'task_id');
        }
        return out.json({ session_id: this.sessions.start(body.task_id ?? undefined).id });
      }
      case 'POST /rl/set_reward': {
        const id = requireSession(sessionId);
        const body = (await readJson(req)) as { interaction_id?: unknown; reward?: unknown };
        if (typeof body.reward !== 'number' || !Number.isFinite(body.reward)) {
          throw new SessionError(400, `reward must be a finite number, got ${JSON.stringify(body.reward)}`, 'reward');
        }
        if (body.interaction_id != null && typeof body.interaction_id !== 'string') {
          throw new SessionError(400, 'interaction_id must be a completion id (a string) or null for the latest turn', 'interaction_id');
        }
        const turn = this.sessions.setReward(id, body.reward, body.interaction_id);
        return out.json({ interaction_id: turn.id, reward: body.reward });
      }
      case 'POST /rl/end_session': {
        const session = this.sessions.end(requireSession(sessionId));
        return out.json({ session_id: session.id, turns: session.turns.length });
      }
      case 'POST /export_trajectories': {
        const body = (await readJson(req)) as { session_id?: unknown };
        const id = typeof body.session_id === 'string' ? body.session_id : requireSession(sessionId);
        const session = this.sessions.take(id);
        return out.json({ session_id: session.id, task_id: session.taskId ?? null, interactions: session.turns });
      }
      // vLLM's dev-mode RLHF routes (VLLM_SERVER_DEV_MODE=1): a reload through collective_rpc and the weight version.
      case 'POST /collective_rpc': {
        const body = (await readJson(req)) as { method?: unknown; args?: unknown; kwargs?: { weights_path?: unknown; model?: unknown } };
        if (body.method !== 'reload_weights') {
          throw OpenAiError.badRequest(
            `method ${JSON.stringify(body.method)} is not served here: the gateway answers "reload_weights"`,
            'method',
          );
        }
        const kwargs = body.kwargs ?? {};
        const weightsPath: unknown = kwargs.weights_path ?? (Array.isArray(body.args) ? (body.args as unknown[])[0] : undefined);
        await this.weights.load(weightsPath, 'kwargs.weights_path', kwargs.model);
        return out.json({ results: [null] });
      }
      case 'POST /update_weight_version': {
        const body = (await readJson(req)) as { new_version?: unknown };
        if (typeof body.new_version !== 'string') throw OpenAiError.badRequest('new_version must be a string', 'new_version');
        this.weights.version = body.new_version;
        return out.json({ success: true, new_version: body.new_version });
      }
      case 'GET /weight_info':
        return out.json({ weight_version: this.weights.version });
      // vLLM's dev-mode cache route (vllm/frontend/entrypoints/serve/dev/cache/api_router.py @055e47c2).
      case 'POST /reset_prefix_cache':
        return out.json({ success: this.weights.prefixCache.reset() });
      // SGLang's native routes.
      case 'POST /update_weights_from_disk': {
        const body = (await readJson(req)) as { model_path?: unknown; weight_version?: unknown; model?: unknown; flush_cache?: unknown };
        if (body.weight_version != null && typeof body.weight_version !== 'string') {
          throw OpenAiError.badRequest('weight_version must be a string', 'weight_version');
        }
        await this.weights.load(body.model_path, 'model_path', body.model);
        // UpdateWeightFromDiskReqInput.flush_cache defaults to true: SGLang flushes its radix cache after the load.
        if (body.flush_cache !== false) this.weights.prefixCache.flush();
        if (typeof body.weight_version === 'string') this.weights.version = body.weight_version;
        const message = `Succeeded to update model weights.${typeof body.weight_version === 'string' ? ` Weight version updated to ${body.weight_version}.` : ''}`;
        return out.json({ success: true, message, num_paused_requests: 0 });
      }
      // SGLang main: the version is on /model_info; the older routes answer 404 (http_server.py, 2026 copies).
      case 'GET /model_info':
        return out.json({
          model_path: this.weights.target().modelId,
          is_generation: true,
          weight_version: this.weights.version ?? 'default',
        });
      case 'GET /get_weight_version':
      case 'GET /weight_version':
        throw OpenAiError.notFound(
          "Endpoint '/get_weight_version' or '/weight_version' is deprecated. Please use '/model_info' instead.",
          null,
          'unknown_url',
        );
      case 'POST /generate':
        return out.json(await sglangGenerate(this.weights, await readJson(req)));
      default:
        throw OpenAiError.notFound(`no route ${req.method} ${url.pathname}`, null, 'unknown_url');
    }
  }

  /** The served model a call names, the agent it is recorded under, and the session that records it. */
  private callContext(model: string, agentHeader: string | undefined, sessionId: string | undefined): CallContext {
    const served = this.models.find(model);
    if (!served)
      throw OpenAiError.notFound(`model "${model}" is not served here. ${this.models.suggest(model)}`, 'model', 'model_not_found');
    let agent = served.agent;
    if (agentHeader !== undefined) {
      const named = this.models.find(agentHeader);
      if (!named?.agent) {
        throw OpenAiError.badRequest(
          `${AGENT_HEADER}: "${agentHeader}" is not an agent role of this run. ${this.models.suggest(agentHeader)}`,
          AGENT_HEADER,
        );
      }
      if (named.modelId !== served.modelId || (agent !== undefined && agent !== named.agent)) {
        throw OpenAiError.badRequest(
          `${AGENT_HEADER}: agent "${named.agent}" samples from model "${named.modelId}", not from "${served.name}"`,
          AGENT_HEADER,
        );
      }
      agent = named.agent;
    }
    const prefixCache = this.weights.prefixCache;
    if (sessionId === undefined) return { served, agent, prefixCache };
    const session = this.sessions.open(sessionId);
    return { served, agent, prefixCache, session, record: (turn) => session.turns.push(turn) };
  }
}

function requireSession(id: string | undefined): string {
  if (id === undefined) {
    throw new SessionError(400, `name the session: POST /<session_id>/rl/... or the ${SESSION_HEADER} header`, 'session_id');
  }
  return id;
}

function sessionAnswer(error: SessionError): OpenAiError {
  return error.status === 404
    ? OpenAiError.notFound(error.message, error.param, 'session_not_found')
    : new OpenAiError(
        error.status,
        error.message,
        'invalid_request_error',
        error.param,
        error.status === 409 ? 'session_state' : 'invalid_value',
      );
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

async function readJson(req: IncomingMessage, emptyIsObject = false): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES)
      throw new OpenAiError(413, `the request body is over ${MAX_BODY_BYTES} bytes`, 'invalid_request_error', null, 'body_too_large');
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '' && emptyIsObject) return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw OpenAiError.badRequest(`the request body is not JSON: ${(cause as Error).message}`, null, 'invalid_json');
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** A JSON answer, or server-sent events once the first event is written. */
function responseSink(res: ServerResponse): ResponseSink {
  return {
    json: (body) => send(res, 200, body),
    event: (body) => {
      if (!res.headersSent)
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      res.write(`data: ${JSON.stringify(body)}\n\n`);
    },
    done: () => {
      if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: [DONE]\n\n');
    },
  };
}
