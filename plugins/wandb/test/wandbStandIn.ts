import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackStandIn } from '../../../test/support/loopbackServer.js';
import { buildSchema, graphql, GraphQLError, Kind, parse, type GraphQLSchema } from 'graphql';
import { parseHistoryLine } from '../src/index.js';

/**
 * A local HTTP stand-in for the W&B API server (no real one can run here: W&B Server is a licensed container image).
 * It answers only what the plugin calls: GraphQL at `/graphql`, executed by graphql-js against the part of W&B's
 * schema those operations touch (so a misspelt field, argument or variable type is an error, as on the real server),
 * and `POST /files/{entity}/{project}/{run}/file_stream`. It keeps each run's history lines at the offsets the client
 * names and rejects what the real server would not take: a wrong API key (401), an unknown entity, a file_stream for
 * a run never upserted (404), an offset past the end of the history (a gap), a line that is not a JSON object with an
 * integer `_step`, and steps that do not go up.
 *
 * It keeps each run's state as W&B's server does (running from the upsert; finished or failed by the exit code of the
 * `complete` request), with the server's stale-run sweep: a running run without file_stream traffic for
 * `staleAfterMs` (about five minutes on W&B's server, wandb/wandb#12500; tests compress it) is marked crashed, and
 * traffic afterwards makes it running again. Failures can be injected per path or GraphQL operation, with a
 * `Retry-After` (the 429s wandb-core honours) and 409 Conflicts (which it retries for UpsertBucket only).
 */

/** The slice of W&B's GraphQL schema the SDKs' Viewer, UpsertBucket and RunResumeStatus operations use. */
const SCHEMA_SDL = `
  scalar JSONString
  type Query {
    viewer: User
    model(name: String, entityName: String): Project
  }
  type Mutation {
    upsertBucket(input: UpsertBucketInput!): UpsertBucketPayload
  }
  input UpsertBucketInput {
    id: String, name: String, groupName: String, modelName: String, entityName: String, description: String
    displayName: String, notes: String, config: JSONString, commit: String, host: String, debug: Boolean
    jobProgram: String, jobRepo: String, jobType: String, state: String, sweep: String, tags: [String!]
    summaryMetrics: JSONString
  }
  type UpsertBucketPayload { bucket: Run, inserted: Boolean }
  type User { id: ID!, entity: String, username: String }
  type Entity { id: ID!, name: String! }
  type Project { id: ID!, name: String!, entity: Entity!, bucket(name: String!, missingOk: Boolean): Run }
  type Run {
    id: ID!, name: String!, displayName: String, config: JSONString, group: String, tags: [String!]!
    summaryMetrics: JSONString, historyLineCount: Int, historyTail: JSONString, project: Project
  }
`;

export interface StoredRun {
  id: string;
  name: string;
  entity: string;
  project: string;
  displayName: string | null;
  group: string | null;
  tags: string[];
  /** The config JSON string as the client sent it. */
  config: string | null;
  /** `wandb-history.jsonl`, line by line, at the offsets the client sent them. */
  history: string[];
  summary: string | null;
  /** The exit code of every `complete: true` request, in order. */
  exitcodes: number[];
  /** The run's state now, and every state it went through, in order (`running`, `crashed`, `finished`, `failed`). */
  state: RunState;
  states: RunState[];
  /** When the last file_stream request for the run arrived (or it was upserted), in ms since the epoch. */
  lastHeard: number;
}

export type RunState = 'running' | 'crashed' | 'finished' | 'failed';

export interface RecordedRequest {
  path: string;
  /** The GraphQL operation's name, for `/graphql`. */
  operation?: string;
  variables?: Record<string, unknown>;
  /** The file_stream body. */
  body?: { files?: Record<string, { offset: number; content: string[] }>; complete?: boolean; exitcode?: number };
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class WandbStandIn extends LoopbackStandIn {
  readonly runs = new Map<string, StoredRun>();
  /** Every request the server answered or failed on purpose, in order. */
  readonly requests: RecordedRequest[] = [];
  private failures: Array<{ status: number; path?: string; retryAfter?: string }> = [];
  /** A running run with no file_stream traffic for this long is marked crashed (W&B's server: about five minutes). */
  staleAfterMs = 5 * 60_000;
  private sweep: NodeJS.Timeout | undefined;
  private readonly schema: GraphQLSchema = buildSchema(SCHEMA_SDL);
  private nextId = 1;
  private injected = 0;

  constructor(
    readonly apiKey = 'k'.repeat(40),
    /** The API key's user entity; `teams` may be named too. */
    readonly entity = 'drmas-user',
    readonly teams: string[] = ['team-rl'],
  ) {
    super();
  }

  /**
   * The next `count` requests (to paths containing `path`, or the GraphQL operation of that name, only, when given) fail
   * with `status`, and a `Retry-After` header when `retryAfter` is given.
   */
  failNext(count: number, status: number, path?: string, retryAfter?: string): void {
    for (let i = 0; i < count; i++) this.failures.push({ status, path, retryAfter });
  }

  override async start(): Promise<string> {
    const url = await super.start();
    this.sweep = setInterval(() => this.sweepStaleRuns(), Math.max(1, this.staleAfterMs / 10)).unref();
    return url;
  }

  override async stop(): Promise<void> {
    clearInterval(this.sweep);
    await super.stop();
  }

  private sweepStaleRuns(): void {
    for (const run of this.runs.values())
      if (run.state === 'running' && Date.now() - run.lastHeard > this.staleAfterMs) this.setState(run, 'crashed');
  }

  private setState(run: StoredRun, state: RunState): void {
    if (run.state === state) return;
    run.state = state;
    run.states.push(state);
  }

  /** Drops the failures `failNext` queued that have not happened. */
  recover(): void {
    this.failures = [];
  }

  /** Resolves once the server has answered `count` requests with an injected failure. */
  async injectedFailures(count: number): Promise<void> {
    while (this.injected < count) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  /** The runs' GraphQL operation names, in order. */
  operations(): string[] {
    return this.requests.flatMap((r) => (r.operation ? [r.operation] : []));
  }

  fileStreams(): NonNullable<RecordedRequest['body']>[] {
    return this.requests.flatMap((r) => (r.body ? [r.body] : []));
  }

  onlyRun(): StoredRun {
    if (this.runs.size !== 1) throw new Error(`expected one run, the stand-in holds ${this.runs.size}`);
    return [...this.runs.values()][0]!;
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    try {
      if (req.method !== 'POST') throw new HttpError(405, `${req.method} is not allowed`);
      const body = JSON.parse(text) as Record<string, unknown>;
      const isGraphql = url.pathname === '/graphql';
      const query = isGraphql ? parse(String(body.query)) : undefined;
      this.requests.push(
        query
          ? {
              path: url.pathname,
              operation: query.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION)?.name?.value,
              variables: (body.variables ?? {}) as Record<string, unknown>,
            }
          : { path: url.pathname, body },
      );
      const operation = this.requests[this.requests.length - 1]!.operation;
      const failure = this.failures.findIndex((f) => !f.path || url.pathname.includes(f.path) || f.path === operation);
      if (failure >= 0) {
        const [{ status, retryAfter }] = this.failures.splice(failure, 1) as [{ status: number; retryAfter?: string }];
        this.injected++;
        send(status, { error: 'injected failure' }, retryAfter === undefined ? {} : { 'retry-after': retryAfter });
        return;
      }
      if (req.headers.authorization !== `Basic ${Buffer.from(`api:${this.apiKey}`).toString('base64')}`) {
        throw new HttpError(401, 'invalid api key');
      }
      if (isGraphql) {
        send(
          200,
          await graphql({
            schema: this.schema,
            source: String(body.query),
            variableValues: body.variables as Record<string, unknown>,
            rootValue: this.resolvers(),
          }),
        );
        return;
      }
      const stream = /^\/files\/([^/]+)\/([^/]+)\/([^/]+)\/file_stream$/.exec(url.pathname);
      if (!stream) throw new HttpError(404, `no route ${url.pathname}`);
      const [entity, project, name] = stream.slice(1).map(decodeURIComponent) as [string, string, string];
      this.fileStream(entity, project, name, body);
      send(200, { exitcode: null, limits: {} });
    } catch (error) {
      send(error instanceof HttpError ? error.status : 500, { error: String((error as Error).message) });
    }
  }

  private resolvers() {
    const runView = (run: StoredRun) => ({
      id: run.id,
      name: run.name,
      displayName: run.displayName,
      config: run.config,
      group: run.group,
      tags: run.tags,
      summaryMetrics: run.summary,
      historyLineCount: run.history.length,
      historyTail: JSON.stringify(run.history.slice(-1)),
      project: projectView(run.entity, run.project),
    });
    const projectView = (entity: string, project: string) => ({
      id: `${entity}/${project}`,
      name: project,
      entity: { id: entity, name: entity },
      bucket: ({ name, missingOk }: { name: string; missingOk?: boolean }) => {
        const run = this.runs.get(`${entity}/${project}/${name}`);
        if (!run && !missingOk) throw new GraphQLError(`run ${name} not found`);
        return run ? runView(run) : null;
      },
    });
    return {
      viewer: () => ({ id: 'user-1', entity: this.entity, username: this.entity }),
      model: ({ name, entityName }: { name?: string; entityName?: string }) =>
        projectView(this.knownEntity(entityName), name ?? 'uncategorized'),
      upsertBucket: ({ input }: { input: Record<string, unknown> }) => {
        const entity = this.knownEntity(input.entityName as string | undefined);
        const project = (input.modelName as string | undefined) ?? 'uncategorized';
        const name = (input.name as string | undefined) ?? `gen${this.nextId}`;
        if (!/^[\w.-]+$/.test(name)) throw new GraphQLError(`invalid run name ${name}`);
        const key = `${entity}/${project}/${name}`;
        const old = this.runs.get(key);
        const run: StoredRun = old ?? {
          id: `run-${this.nextId++}`,
          name,
          entity,
          project,
          displayName: null,
          group: null,
          tags: [],
          config: null,
          history: [],
          summary: null,
          exitcodes: [],
          state: 'running',
          states: ['running'],
          lastHeard: Date.now(),
        };
        run.lastHeard = Date.now();
        if (old) this.setState(run, 'running');
        if (typeof input.displayName === 'string') run.displayName = input.displayName;
        if (typeof input.groupName === 'string') run.group = input.groupName;
        if (Array.isArray(input.tags)) run.tags = input.tags as string[];
        if (typeof input.config === 'string') {
          JSON.parse(input.config);
          run.config = input.config;
        }
        this.runs.set(key, run);
        return { bucket: runView(run), inserted: !old };
      },
    };
  }

  private knownEntity(name: string | undefined): string {
    if (name === undefined || name === '') return this.entity;
    if (name !== this.entity && !this.teams.includes(name)) throw new GraphQLError(`entity ${name} not found`);
    return name;
  }

  private fileStream(entity: string, project: string, name: string, body: Record<string, unknown>): void {
    const run = this.runs.get(`${entity}/${project}/${name}`);
    if (!run) throw new HttpError(404, `run ${entity}/${project}/${name} not found`);
    run.lastHeard = Date.now();
    // Traffic revives a run the sweep marked crashed (as W&B's UI shows a crashed run that logs again as running).
    if (run.state === 'crashed') this.setState(run, 'running');
    const files = (body.files ?? {}) as Record<string, { offset: number; content: string[] }>;
    for (const [file, { offset, content }] of Object.entries(files)) {
      if (!Number.isInteger(offset) || offset < 0 || !Array.isArray(content)) throw new HttpError(400, `bad chunk for ${file}`);
      if (file === 'wandb-summary.json') {
        parseHistoryLine(content[0] ?? '{}');
        run.summary = content[0] ?? null;
        continue;
      }
      if (file !== 'wandb-history.jsonl') continue;
      if (offset > run.history.length) throw new HttpError(400, `history offset ${offset} leaves a gap after line ${run.history.length}`);
      // Checked as a whole before any line is kept, so a rejected request changes nothing.
      const lines = [...run.history.slice(0, offset), ...content];
      lines.forEach((line, i) => {
        const step = parseHistoryLine(line)._step;
        if (!Number.isInteger(step)) throw new HttpError(400, `history line without an integer _step: ${line}`);
        const before = i > 0 ? (parseHistoryLine(lines[i - 1]!)._step as number) : -1;
        if ((step as number) <= before) throw new HttpError(400, `_step ${String(step)} after ${before}`);
      });
      run.history.splice(offset, content.length, ...content);
    }
    if (body.complete === true) {
      if (!Number.isInteger(body.exitcode)) throw new HttpError(400, 'complete without an integer exitcode');
      run.exitcodes.push(body.exitcode as number);
      this.setState(run, body.exitcode === 0 ? 'finished' : 'failed');
    }
  }
}
