import * as grpc from '@grpc/grpc-js';
import { DrmasError, type EnvAction, type EnvTask, type Environment } from '@drmas/core';
import {
  environmentService,
  MAX_MESSAGE_BYTES,
  METHOD_NAMES,
  type EnvironmentMethods,
  type EpisodeStateMessage,
  type MethodName,
  type SessionActionMessage,
  type SessionOpenMessage,
  type TaskMessage,
} from '../protocol/environmentProtocol.js';
import { episodeState, SessionTable, type Session } from './SessionTable.js';

/** An environment the server hosts, and the plugin it came from. */
export interface ServedEnvironment {
  environment: Environment;
  plugin: string;
}

export interface EnvironmentServerOptions {
  /** By name, in the order `ListEnvironments` lists them. */
  environments: ReadonlyMap<string, ServedEnvironment>;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** A session no call touched for this long is closed. */
  idleTimeoutMs: number;
  /** Sessions open at once at most; more are refused (RESOURCE_EXHAUSTED). */
  maxSessions: number;
}

export const SERVER_DEFAULTS = { host: '127.0.0.1', port: 50051, idleTimeoutMs: 300_000, maxSessions: 100_000 } as const;

/** Tasks per GetTasks call at most: a reply stays far below gRPC's 4 MB message limit for prompt-sized tasks. */
export const MAX_TASKS_PER_CALL = 4096;

/** An error answered to the caller with its status code. */
class RpcError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
  }
}

function failedState(sessionId: string, code: grpc.status, message: string): EpisodeStateMessage {
  return {
    sessionId,
    error: message,
    errorCode: grpc.status[code],
    observation: '',
    variables: {},
    done: false,
    outcome: 0,
    metrics: {},
    stepsTaken: 0,
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** What a task looks like on the wire: its JSON and what an episode of it shows at the start. */
function taskMessage(environment: Environment, task: EnvTask): TaskMessage {
  const episode = environment.reset(task);
  return {
    id: task.id,
    dataSource: task.dataSource,
    taskJson: JSON.stringify(task),
    observation: episode.observation(),
    variables: episode.variables(),
  };
}

/**
 * The gRPC environment service (`proto/drmas_env.proto`) over environments in this process: sessions are episodes of
 * the hosted environments, stepped in one `Environment.step` call per request and environment.
 */
export class EnvironmentServer {
  private readonly sessions: SessionTable;
  private readonly calls: Record<string, number> = Object.fromEntries(METHOD_NAMES.map((m) => [m, 0]));
  private stopping = false;

  private constructor(
    private readonly server: grpc.Server,
    private readonly options: EnvironmentServerOptions,
    /** The port bound (the one given, or the free one picked for 0). */
    readonly port: number,
  ) {
    this.sessions = new SessionTable(options.idleTimeoutMs, options.maxSessions);
  }

  /** `host:port`, as a client's `env.remote.urls` names it. */
  get address(): string {
    return `${this.options.host.includes(':') ? `[${this.options.host}]` : this.options.host}:${this.port}`;
  }

  /** Binds and starts serving; a port in use or not allowed is INVALID_ARGUMENT naming `--port`. */
  static async start(options: EnvironmentServerOptions): Promise<EnvironmentServer> {
    const server = new grpc.Server({ 'grpc.max_receive_message_length': MAX_MESSAGE_BYTES });
    const host = options.host.includes(':') ? `[${options.host}]` : options.host;
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`${host}:${options.port}`, grpc.ServerCredentials.createInsecure(), (error, bound) => {
        if (!error) return resolve(bound);
        const taken = /EADDRINUSE/.test(error.message);
        reject(
          new DrmasError(
            'INVALID_ARGUMENT',
            taken
              ? `port ${options.port} on ${options.host} is in use`
              : `cannot listen on ${options.host}:${options.port}: ${error.message}`,
            {
              key: '--port',
              cause: error,
              hint: taken
                ? 'stop what listens there, pick another --port, or give --port 0 for a free one'
                : 'check --host names an address of this machine',
            },
          ),
        );
      }),
    );
    const running = new EnvironmentServer(server, options, port);
    server.addService(environmentService(), running.handlers());
    return running;
  }

  /** Counters for `Health` and tests. */
  stats(): EnvironmentMethods['Health'][1] {
    return {
      status: this.stopping ? 'STOPPING' : 'SERVING',
      environments: [...this.options.environments.keys()],
      openSessions: this.sessions.size,
      sessionsCreated: this.sessions.created,
      sessionsExpired: this.sessions.expired,
      calls: { ...this.calls },
      idleTimeoutMs: this.options.idleTimeoutMs,
    };
  }

  /**
   * Stops accepting calls, lets those in flight finish for up to `graceMs`, then cuts what is left; closes every
   * session.
   */
  async close(graceMs = 5000): Promise<void> {
    this.stopping = true;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, graceMs);
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    this.sessions.close();
  }

  private handlers(): grpc.UntypedServiceImplementation {
    const methods: { [M in MethodName]: (request: EnvironmentMethods[M][0]) => Promise<EnvironmentMethods[M][1]> } = {
      Health: () => Promise.resolve(this.stats()),
      ListEnvironments: () => Promise.resolve(this.list()),
      GetTasks: (request) => this.getTasks(request),
      CreateSessions: (request) => this.createSessions(request),
      Step: (request) => this.step(request),
      CloseSessions: (request) => Promise.resolve(this.closeSessions(request.sessionIds)),
    };
    const handlers: grpc.UntypedServiceImplementation = {};
    for (const name of METHOD_NAMES) {
      const method = methods[name] as (request: unknown) => Promise<unknown>;
      handlers[name] = (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        this.calls[name]!++;
        method(call.request).then(
          (reply) => callback(null, reply),
          (error: unknown) =>
            callback({
              code: error instanceof RpcError ? error.code : grpc.status.INTERNAL,
              details: messageOf(error),
            }),
        );
      };
    }
    return handlers;
  }

  private served(name: string): Environment {
    const served = this.options.environments.get(name);
    if (!served) {
      throw new RpcError(
        grpc.status.NOT_FOUND,
        `no environment "${name}" here (serving: ${[...this.options.environments.keys()].join(', ')})`,
      );
    }
    return served.environment;
  }

  private list(): EnvironmentMethods['ListEnvironments'][1] {
    return {
      environments: [...this.options.environments].map(([name, { environment, plugin }]) => ({
        name,
        plugin,
        maxSteps: environment.maxRounds,
        testSize: environment.test().length,
      })),
    };
  }

  private async getTasks(request: EnvironmentMethods['GetTasks'][0]): Promise<EnvironmentMethods['GetTasks'][1]> {
    const environment = this.served(request.environment);
    if (request.count > MAX_TASKS_PER_CALL) {
      throw new RpcError(grpc.status.INVALID_ARGUMENT, `count ${request.count} is above ${MAX_TASKS_PER_CALL} tasks per call`);
    }
    if (request.split === 'train') {
      await environment.prepare?.(request.cursor, request.count);
      const batch = environment.batch(request.cursor, request.count);
      return { tasks: batch.tasks.map((task) => taskMessage(environment, task)), nextCursor: batch.nextCursor };
    }
    if (request.split === 'test') {
      const tasks = environment.test().slice(request.cursor, request.cursor + request.count);
      return { tasks: tasks.map((task) => taskMessage(environment, task)), nextCursor: request.cursor + tasks.length };
    }
    throw new RpcError(grpc.status.INVALID_ARGUMENT, `split "${request.split}" is neither "train" nor "test"`);
  }

  private async taskOf(environment: Environment, open: SessionOpenMessage): Promise<EnvTask> {
    if (open.task === 'taskJson') {
      let task: unknown;
      try {
        task = JSON.parse(open.taskJson!);
      } catch (error) {
        throw new RpcError(grpc.status.INVALID_ARGUMENT, `task_json is not JSON: ${messageOf(error)}`);
      }
      if (typeof task !== 'object' || task === null || typeof (task as EnvTask).id !== 'string') {
        throw new RpcError(grpc.status.INVALID_ARGUMENT, 'task_json is not a task object (with a string "id")');
      }
      return task as EnvTask;
    }
    if (open.task === 'ref') {
      const { split, index } = open.ref!;
      if (split === 'test') {
        const task = environment.test()[index];
        if (!task)
          throw new RpcError(grpc.status.INVALID_ARGUMENT, `held-out index ${index} is out of range (${environment.test().length} tasks)`);
        return task;
      }
      if (split === 'train') {
        await environment.prepare?.(index, 1);
        const task = environment.batch(index, 1).tasks[0];
        if (!task) throw new RpcError(grpc.status.INVALID_ARGUMENT, `training index ${index} is past the end of the training tasks`);
        return task;
      }
      throw new RpcError(grpc.status.INVALID_ARGUMENT, `split "${split}" is neither "train" nor "test"`);
    }
    throw new RpcError(grpc.status.INVALID_ARGUMENT, 'a session needs a task: ref (split and index) or task_json');
  }

  private async createSessions(request: EnvironmentMethods['CreateSessions'][0]): Promise<EnvironmentMethods['CreateSessions'][1]> {
    const environment = this.served(request.environment);
    const states: EpisodeStateMessage[] = [];
    for (const open of request.sessions) {
      try {
        if (!open.sessionId) throw new RpcError(grpc.status.INVALID_ARGUMENT, 'session_id is empty');
        const task = await this.taskOf(environment, open);
        const taskJson = JSON.stringify(task);
        const existing = this.sessions.get(open.sessionId);
        if (existing) {
          if (existing.taskJson !== taskJson || existing.environment !== request.environment) {
            throw new RpcError(grpc.status.ALREADY_EXISTS, `session ${open.sessionId} is open for another task`);
          }
          states.push(existing.last);
          continue;
        }
        if (this.sessions.size >= this.options.maxSessions) {
          throw new RpcError(grpc.status.RESOURCE_EXHAUSTED, `the server holds its limit of ${this.options.maxSessions} sessions`);
        }
        const episode = environment.reset(task);
        states.push(this.sessions.add({ id: open.sessionId, environment: request.environment, env: environment, episode, taskJson }).last);
      } catch (error) {
        states.push(failedState(open.sessionId, error instanceof RpcError ? error.code : grpc.status.INTERNAL, messageOf(error)));
      }
    }
    return { states };
  }

  private async step(request: EnvironmentMethods['Step'][0]): Promise<EnvironmentMethods['Step'][1]> {
    const environment = this.served(request.environment);
    const states = new Array<EpisodeStateMessage>(request.actions.length);
    // A retry may arrive while the first attempt still runs: it waits, then finds the step applied.
    const inFlight = request.actions.flatMap((a) => this.sessions.get(a.sessionId)?.pending ?? []);
    await Promise.all(inFlight);
    const toApply: Array<{ at: number; session: Session; action: EnvAction }> = [];
    request.actions.forEach((entry: SessionActionMessage, at) => {
      const session = this.sessions.get(entry.sessionId);
      const fail = (code: grpc.status, message: string) => (states[at] = failedState(entry.sessionId, code, message));
      if (!session || session.environment !== request.environment) {
        return fail(
          grpc.status.NOT_FOUND,
          `session ${entry.sessionId} is not open (closed, or idle past ${this.options.idleTimeoutMs} ms)`,
        );
      }
      if (entry.stepIndex === session.rounds - 1) return (states[at] = session.last);
      if (entry.stepIndex !== session.rounds) {
        return fail(
          grpc.status.FAILED_PRECONDITION,
          `round ${entry.stepIndex} of session ${entry.sessionId}, which has taken ${session.rounds}`,
        );
      }
      if (session.episode.done) return fail(grpc.status.FAILED_PRECONDITION, `session ${entry.sessionId}'s episode is over`);
      if (toApply.some((other) => other.session === session)) {
        return fail(grpc.status.INVALID_ARGUMENT, `session ${entry.sessionId} appears twice in one step`);
      }
      const { type, content, agentId, turnIndex } = entry.action ?? { type: 'invalid', content: '' };
      const action: EnvAction = { type, content, ...(agentId ? { agentId } : {}), ...(turnIndex === undefined ? {} : { turnIndex }) };
      toApply.push({ at, session, action });
    });
    if (toApply.length > 0) {
      const applied = environment.advance(
        toApply.map((a) => a.session.episode),
        toApply.map((a) => a.action),
      );
      const pending = applied.then(
        () => undefined,
        () => undefined,
      );
      for (const { session } of toApply) session.pending = pending;
      try {
        await applied;
        for (const { at, session } of toApply) {
          session.rounds++;
          session.last = episodeState(session);
          states[at] = session.last;
        }
      } catch (error) {
        for (const { at, session } of toApply)
          states[at] = failedState(session.id, grpc.status.INTERNAL, `the environment failed: ${messageOf(error)}`);
      } finally {
        for (const { session } of toApply) session.pending = undefined;
      }
    }
    return { states };
  }

  private closeSessions(ids: string[]): EnvironmentMethods['CloseSessions'][1] {
    let closed = 0;
    for (const id of ids) if (this.sessions.delete(id)) closed++;
    return { closed };
  }
}
