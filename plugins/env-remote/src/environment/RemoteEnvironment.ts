import { randomUUID } from 'node:crypto';
import { didYouMean, DrmasError, type EnvAction, type EnvTask, type EnvTaskBatch, type Environment, type Episode } from '@drmas/core';
import { RemoteCallError, ServerConnection, type CallCounts } from '../client/ServerConnection.js';
import type { EnvironmentSpecMessage, EpisodeStateMessage, TaskMessage } from '../protocol/environmentProtocol.js';
import { remoteSettings, type RemoteEnvSettingsInput, type RemoteSettings } from './remoteEnvConfig.js';

/** A served task: the server's task object as JSON, and what an episode of it shows at the start. */
export interface RemoteTask extends EnvTask {
  remote: { taskJson: string; observation: string; variables: Record<string, string> };
}

/** Held-out tasks fetched per call at init: a few KB each at most, so a reply stays well below the message limit. */
const TEST_CHUNK = 256;

function remoteTask(message: TaskMessage): RemoteTask {
  return {
    id: message.id,
    dataSource: message.dataSource,
    remote: { taskJson: message.taskJson, observation: message.observation, variables: { ...message.variables } },
  };
}

/**
 * An episode run on a server: the state the server last answered. `judge` is not offered (it is synchronous and
 * the task's checker lives on the server), so an orchestra's own turn scores fall back to the acting turn's round score.
 */
export class RemoteEpisode implements Episode {
  done = false;
  outcome = 0;
  roundScore?: number;
  failure?: string;
  /** Set at the episode's first round: its server (index into the urls) and session id. */
  server?: number;
  sessionId?: string;
  opened = false;
  /** Rounds the server applied (the protocol's `stepsTaken`). */
  rounds = 0;
  private current: { observation: string; variables: Record<string, string> };
  private serverMetrics: Record<string, number> = {};

  constructor(readonly task: RemoteTask) {
    this.current = { observation: task.remote.observation, variables: task.remote.variables };
  }

  observation(): string {
    return this.current.observation;
  }

  variables(): Record<string, string> {
    return this.current.variables;
  }

  /** The server's metrics of the episode, and `remote_failed` (1 when its server failed it). */
  metrics(): Record<string, number> {
    return { ...this.serverMetrics, remote_failed: this.failure === undefined ? 0 : 1 };
  }

  apply(state: EpisodeStateMessage): void {
    this.current = { observation: state.observation, variables: { ...state.variables } };
    this.done = state.done;
    this.outcome = state.outcome;
    this.roundScore = state.stepScore;
    this.serverMetrics = { ...state.metrics };
    this.rounds = state.stepsTaken;
  }

  /** Ends the episode as failed: no reward is known, so the orchestra trains none of its turns. */
  fail(reason: string): void {
    this.failure ??= reason;
    this.done = true;
    this.outcome = 0;
    this.roundScore = undefined;
  }
}

/** What the remote environment has counted: calls, retries, sessions per server, failed episodes. */
export interface RemoteStats extends CallCounts {
  sessionsByServer: Record<string, number>;
  failedEpisodes: number;
}

/**
 * The `remote` environment: episodes of an environment hosted by `drmas serve` processes (`env.remote.urls`). Tasks
 * come from the servers (`prepare` fetches what `batch` hands out), each episode opens a session on the next server
 * round-robin and stays there, and one round is one CreateSessions (first round) and one Step call per server (the
 * protocol keeps its name for a round, `Step`). An episode whose server fails (after the bounded retries) is ended with `failure` set, never thrown: the
 * run goes on and records it.
 */
export class RemoteEnvironment implements Environment<RemoteTask> {
  readonly name = 'remote';
  private readonly settingsOf: () => RemoteEnvSettingsInput;
  private settings?: RemoteSettings;
  private configuredMaxRounds?: number;
  private connections: ServerConnection[] = [];
  private spec?: EnvironmentSpecMessage;
  private heldOut: RemoteTask[] = [];
  private prepared = new Map<string, EnvTaskBatch<RemoteTask>>();
  private nextServer = 0;
  private readonly counts: RemoteStats = { calls: 0, retries: 0, failures: 0, sessionsByServer: {}, failedEpisodes: 0 };

  constructor(settings: RemoteEnvSettingsInput | (() => RemoteEnvSettingsInput)) {
    this.settingsOf = typeof settings === 'function' ? settings : () => settings;
  }

  /** The served environment's (its `maxSteps` field), once init fetched it; before that `env.maxRounds`, else 1. */
  get maxRounds(): number {
    return this.spec?.maxSteps ?? this.configuredMaxRounds ?? this.settingsOf().maxRounds ?? 1;
  }

  /** The served environment's name, once init chose it. */
  get environment(): string | undefined {
    return this.spec?.name;
  }

  stats(): RemoteStats {
    return { ...this.counts, sessionsByServer: { ...this.counts.sessionsByServer } };
  }

  async init(): Promise<void> {
    if (this.spec) return;
    const env = this.settingsOf();
    if (env.remote === undefined) {
      throw new DrmasError('CONFIG_INVALID', 'the remote environment needs env.remote.urls', {
        key: 'env.remote.urls',
        hint: "start a server (drmas serve --environments math --port 50051) and set env.remote: { urls: ['127.0.0.1:50051'] }",
      });
    }
    const parsed = remoteSettings.safeParse(env.remote);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new DrmasError('CONFIG_INVALID', `env.remote.${issue.path.join('.')}: ${issue.message}`, {
        key: `env.remote.${issue.path.join('.')}`,
      });
    }
    const settings = parsed.data;
    this.configuredMaxRounds = env.maxRounds;
    const policy = {
      deadlineMs: settings.deadlineMs,
      retries: settings.retries,
      backoffMs: settings.backoffMs,
      maxBackoffMs: settings.maxBackoffMs,
    };
    const connections = settings.urls.map((url) => new ServerConnection(url, policy, this.counts));
    try {
      const listed = await Promise.all(
        connections.map((c) =>
          c.call('ListEnvironments', {}).catch((error: unknown) => {
            throw error instanceof RemoteCallError
              ? new DrmasError('SERVICE_FAILED', `cannot reach the environment server at ${c.url}: ${error.message}`, {
                  key: 'env.remote.urls',
                  cause: error,
                  hint: `start it (drmas serve --environments NAME --port ${c.url.slice(c.url.lastIndexOf(':') + 1)}) or remove it from env.remote.urls`,
                })
              : error;
          }),
        ),
      );
      const spec = this.chooseSpec(
        settings,
        listed.map((reply, i) => ({ url: settings.urls[i]!, environments: reply.environments })),
      );
      this.settings = settings;
      this.connections = connections;
      this.heldOut = await this.fetchHeldOut(spec);
      this.spec = spec;
    } catch (error) {
      for (const c of connections) c.close();
      this.connections = [];
      throw error;
    }
  }

  async prepare(cursor: number, count: number): Promise<void> {
    const key = `${cursor}/${count}`;
    if (this.prepared.has(key)) return;
    const spec = this.ready();
    // Any server can hand out tasks (they serve the same environment): the next one, then the others if it fails.
    let lastError: unknown;
    for (let tried = 0; tried < this.connections.length; tried++) {
      const connection = this.connections[(this.nextServer + tried) % this.connections.length]!;
      try {
        const reply = await connection.call('GetTasks', { environment: spec.name, split: 'train', cursor, count });
        this.prepared.clear();
        this.prepared.set(key, { tasks: reply.tasks.map(remoteTask), nextCursor: reply.nextCursor });
        return;
      } catch (error) {
        if (!(error instanceof RemoteCallError)) throw error;
        lastError = error;
      }
    }
    throw new DrmasError('SERVICE_FAILED', `no environment server could hand out training tasks: ${(lastError as Error).message}`, {
      key: 'env.remote.urls',
      cause: lastError,
      hint: 'restart the servers of env.remote.urls (drmas serve), then resume the run with --resume',
    });
  }

  batch(cursor: number, count: number): EnvTaskBatch<RemoteTask> {
    const batch = this.prepared.get(`${cursor}/${count}`);
    if (!batch)
      throw new Error(`RemoteEnvironment.batch(${cursor}, ${count}) before prepare(${cursor}, ${count}): await environment.prepare first`);
    return batch;
  }

  test(): RemoteTask[] {
    this.ready();
    return this.heldOut;
  }

  reset(task: RemoteTask): RemoteEpisode {
    return new RemoteEpisode(task);
  }

  async advance(episodes: Episode[], actions: EnvAction[]): Promise<void> {
    if (actions.length !== episodes.length) throw new Error(`advance got ${actions.length} actions for ${episodes.length} episodes`);
    this.ready();
    const byServer = new Map<number, Array<{ episode: RemoteEpisode; action: EnvAction }>>();
    episodes.forEach((e, i) => {
      const episode = e as RemoteEpisode;
      if (episode.server === undefined) {
        episode.server = this.nextServer;
        episode.sessionId = randomUUID();
        this.nextServer = (this.nextServer + 1) % this.connections.length;
      }
      byServer.set(episode.server, [...(byServer.get(episode.server) ?? []), { episode, action: actions[i]! }]);
    });
    await Promise.all([...byServer].map(([server, items]) => this.advanceOn(server, items)));
    const failed = episodes.filter((e) => (e as RemoteEpisode).failure !== undefined).length;
    this.counts.failedEpisodes += failed;
  }

  /** Closes every connection (the servers close abandoned sessions after their idle timeout). */
  close(): void {
    for (const c of this.connections) c.close();
    this.connections = [];
    this.spec = undefined;
  }

  private async advanceOn(server: number, items: Array<{ episode: RemoteEpisode; action: EnvAction }>): Promise<void> {
    const connection = this.connections[server]!;
    const environment = this.spec!.name;
    try {
      const fresh = items.filter((i) => !i.episode.opened);
      if (fresh.length > 0) {
        const reply = await connection.call('CreateSessions', {
          environment,
          sessions: fresh.map(({ episode }) => ({ sessionId: episode.sessionId!, taskJson: episode.task.remote.taskJson })),
        });
        reply.states.forEach((state, k) => {
          const { episode } = fresh[k]!;
          if (state.error) episode.fail(`server ${connection.url}: opening the session failed with ${state.errorCode}: ${state.error}`);
          else {
            episode.opened = true;
            this.counts.sessionsByServer[connection.url] = (this.counts.sessionsByServer[connection.url] ?? 0) + 1;
          }
        });
      }
      const live = items.filter((i) => i.episode.failure === undefined);
      if (live.length > 0) {
        const reply = await connection.call('Step', {
          environment,
          actions: live.map(({ episode, action }) => ({
            sessionId: episode.sessionId!,
            stepIndex: episode.rounds,
            action: {
              type: action.type,
              content: action.content,
              agentId: action.agentId ?? '',
              ...(action.turnIndex === undefined ? {} : { turnIndex: action.turnIndex }),
            },
          })),
        });
        reply.states.forEach((state, k) => {
          const { episode } = live[k]!;
          if (state.error) episode.fail(`server ${connection.url}: the round failed with ${state.errorCode}: ${state.error}`);
          else episode.apply(state);
        });
      }
    } catch (error) {
      if (!(error instanceof RemoteCallError)) throw error;
      for (const { episode } of items) if (!episode.done) episode.fail(error.message);
    }
    const over = items.filter((i) => i.episode.opened && (i.episode.done || i.episode.rounds >= this.maxRounds));
    if (over.length > 0) {
      // Best effort, one attempt: a session not closed here expires on the server.
      await connection.call('CloseSessions', { sessionIds: over.map((i) => i.episode.sessionId!) }, { retries: 0 }).catch(() => undefined);
    }
  }

  private chooseSpec(
    settings: RemoteSettings,
    servers: Array<{ url: string; environments: EnvironmentSpecMessage[] }>,
  ): EnvironmentSpecMessage {
    const first = servers[0]!;
    const names = first.environments.map((e) => e.name);
    const name = settings.environment ?? (names.length === 1 ? names[0] : undefined);
    if (name === undefined) {
      throw new DrmasError(
        'CONFIG_INVALID',
        `the server at ${first.url} serves ${names.length} environments (${names.join(', ')}); say which one to run`,
        {
          key: 'env.remote.environment',
          hint: `set env.remote.environment to one of: ${names.join(', ')}`,
        },
      );
    }
    let spec: EnvironmentSpecMessage | undefined;
    for (const server of servers) {
      const found = server.environments.find((e) => e.name === name);
      if (!found) {
        const served = server.environments.map((e) => e.name);
        throw new DrmasError(
          'CONFIG_INVALID',
          `the server at ${server.url} does not serve an environment "${name}" (it serves: ${served.join(', ') || 'none'})`,
          {
            key: 'env.remote.environment',
            hint: didYouMean(name, served).trim() || `start it with --environments ${name}, or set env.remote.environment to one it serves`,
          },
        );
      }
      if (spec && (found.maxSteps !== spec.maxSteps || found.testSize !== spec.testSize)) {
        throw new DrmasError(
          'CONFIG_INVALID',
          `the servers of env.remote.urls serve "${name}" differently: ${servers[0]!.url} with ${spec.maxSteps} rounds and ${spec.testSize} held-out tasks, ${server.url} with ${found.maxSteps} and ${found.testSize}`,
          { key: 'env.remote.urls', hint: 'start every server with the same --config and --set options' },
        );
      }
      spec ??= found;
    }
    return spec!;
  }

  private async fetchHeldOut(spec: EnvironmentSpecMessage): Promise<RemoteTask[]> {
    const tasks: RemoteTask[] = [];
    while (tasks.length < spec.testSize) {
      const reply = await this.connections[0]!.call('GetTasks', {
        environment: spec.name,
        split: 'test',
        cursor: tasks.length,
        count: TEST_CHUNK,
      }).catch((error: unknown) => {
        throw error instanceof RemoteCallError
          ? new DrmasError('SERVICE_FAILED', `cannot fetch the held-out tasks: ${error.message}`, { key: 'env.remote.urls', cause: error })
          : error;
      });
      if (reply.tasks.length === 0) break;
      tasks.push(...reply.tasks.map(remoteTask));
    }
    return tasks;
  }

  private ready(): EnvironmentSpecMessage {
    if (!this.spec) throw new Error('RemoteEnvironment used before init()');
    return this.spec;
  }
}
