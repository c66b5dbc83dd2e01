import { DrmasError, fetchText, retrying, type RetrySchedule } from '@drmas/core';

/** Where W&B's SDKs send runs when WANDB_BASE_URL is not set. */
export const DEFAULT_BASE_URL = 'https://api.wandb.ai';

export interface WandbClientOptions {
  /** The API server, e.g. `https://api.wandb.ai` or a W&B Server at `http://localhost:8080`. */
  baseUrl: string;
  apiKey: string;
  /** Per request. */
  timeoutMs: number;
  /** Further tries after a network error or a status W&B's own client retries (429, 5xx, ...), with doubling waits. */
  retries: number;
  retryDelayMs: number;
}

/**
 * How long a request that must get through (the run's last file_stream request, with the exit code) is tried again:
 * wandb-core's file_stream client (core/internal/filestream/filestream.go at wandb b6e29505) waits 2 s doubling to
 * 60 s, a quarter of jitter added, for 7 days, or what a `Retry-After` asks.
 */
export interface Patience {
  /** Give up once this much time has passed since the first try. */
  deadlineMs: number;
  delayMs: number;
  maxDelayMs: number;
}

/** A run's address on the server: `/files/{entity}/{project}/{runId}/file_stream`. */
export interface RunPath {
  entity: string;
  project: string;
  runId: string;
}

export interface UpsertRunInput extends RunPath {
  displayName: string;
  group?: string;
  tags?: string[];
  /** The run config in the backend's form, `{ key: { value } }`, as JSON. */
  config?: string;
}

/** What a resumed run continues from (W&B's `RunResumeStatus`). */
export interface ResumeStatus {
  /** History lines the server holds: the next line's offset. */
  historyLineCount: number;
  /** `_step` of the last history line, if any. */
  lastStep: number | undefined;
  /** The run summary so far. */
  summary: Record<string, unknown>;
}

/** One file_stream request: lines of `wandb-history.jsonl` from `offset`, the summary, and at the end the exit code. */
export interface FileStreamRequest {
  files?: Record<string, { offset: number; content: string[] }>;
  complete?: boolean;
  exitcode?: number;
}

/** The GraphQL documents, spelt as W&B's SDKs send them (trimmed to the fields this client reads). */
export const VIEWER_QUERY = `query Viewer {
  viewer {
    id
    entity
  }
}`;

export const UPSERT_BUCKET_MUTATION = `mutation UpsertBucket(
  $name: String
  $project: String
  $entity: String
  $groupName: String
  $displayName: String
  $config: JSONString
  $tags: [String!]
) {
  upsertBucket(
    input: {
      name: $name
      modelName: $project
      entityName: $entity
      groupName: $groupName
      displayName: $displayName
      config: $config
      tags: $tags
    }
  ) {
    bucket {
      id
      name
      displayName
      project {
        name
        entity {
          name
        }
      }
    }
    inserted
  }
}`;

export const RUN_RESUME_STATUS_QUERY = `query RunResumeStatus($project: String, $entity: String, $name: String!) {
  model(name: $project, entityName: $entity) {
    bucket(name: $name, missingOk: true) {
      id
      name
      historyLineCount
      historyTail
      summaryMetrics
    }
  }
}`;

/**
 * Statuses wandb-core does not retry (`RetryMostFailures`, core/internal/clients/retry_policy.go at wandb b6e29505):
 * the request itself is wrong. Any other 4xx or 5xx, 429 with its `Retry-After` included, is tried again.
 */
const FINAL_STATUSES: ReadonlySet<number> = new Set([400, 401, 403, 404, 409, 410, 413, 422, 501]);
/** `UpsertBucketRetryPolicy` (the same file): a 409 Conflict (two upserts of one run at once) is tried again. */
const UPSERT_BUCKET_FINAL_STATUSES: ReadonlySet<number> = new Set([...FINAL_STATUSES].filter((status) => status !== 409));

interface GraphqlAnswer<T> {
  data?: T;
  errors?: Array<{ message?: string }>;
}

/**
 * The few W&B HTTP calls a metrics sink needs, over Node's fetch: GraphQL at `{baseUrl}/graphql` (Viewer, UpsertBucket,
 * RunResumeStatus) and the run's `file_stream`. Authenticates as W&B's SDKs do (HTTP basic, user `api`, the API key as
 * password). A failure is a SERVICE_FAILED error naming the call and what the server said; network errors, timeouts and
 * the statuses W&B's client retries are tried again.
 */
export class WandbClient {
  readonly baseUrl: string;
  private readonly authorization: string;

  constructor(private readonly options: WandbClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.authorization = `Basic ${Buffer.from(`api:${options.apiKey}`).toString('base64')}`;
  }

  /** The API key's default entity (its user or team). */
  async viewerEntity(): Promise<string> {
    const data = await this.graphql<{ viewer: { entity?: string | null } | null }>('Viewer', VIEWER_QUERY, FINAL_STATUSES, {});
    const entity = data.viewer?.entity;
    if (!entity) throw serviceError('Viewer', 'the server knows no user for WANDB_API_KEY', 'key');
    return entity;
  }

  /** Creates the run, or updates it when `runId` exists in the project; answers where it lives. */
  async upsertRun(input: UpsertRunInput): Promise<RunPath & { displayName: string }> {
    const data = await this.graphql<{
      upsertBucket: { bucket: { name: string; displayName?: string | null; project: { name: string; entity: { name: string } } } } | null;
    }>('UpsertBucket', UPSERT_BUCKET_MUTATION, UPSERT_BUCKET_FINAL_STATUSES, {
      name: input.runId,
      project: input.project,
      entity: input.entity,
      groupName: input.group,
      displayName: input.displayName,
      config: input.config,
      tags: input.tags,
    });
    const bucket = data.upsertBucket?.bucket;
    if (!bucket) throw serviceError('UpsertBucket', 'the answer holds no run', 'url');
    return {
      entity: bucket.project.entity.name,
      project: bucket.project.name,
      runId: bucket.name,
      displayName: bucket.displayName ?? input.displayName,
    };
  }

  /** Where an existing run's history ends; undefined when the server has no such run. */
  async resumeStatus(run: RunPath): Promise<ResumeStatus | undefined> {
    const data = await this.graphql<{
      model: {
        bucket: { historyLineCount?: number | null; historyTail?: string | null; summaryMetrics?: string | null } | null;
      } | null;
    }>('RunResumeStatus', RUN_RESUME_STATUS_QUERY, FINAL_STATUSES, { project: run.project, entity: run.entity, name: run.runId });
    const bucket = data.model?.bucket;
    if (!bucket) return undefined;
    const tail = bucket.historyTail ? (JSON.parse(bucket.historyTail) as string[]) : [];
    const last = tail.length ? (parseHistoryLine(tail[tail.length - 1]!)._step as number | undefined) : undefined;
    return {
      historyLineCount: bucket.historyLineCount ?? 0,
      lastStep: typeof last === 'number' ? last : undefined,
      summary: bucket.summaryMetrics ? parseHistoryLine(bucket.summaryMetrics) : {},
    };
  }

  /** One file_stream request: tried `retries` more times, or, with `patience`, until its deadline. */
  async fileStream(run: RunPath, request: FileStreamRequest, patience?: Patience): Promise<void> {
    const url = `${this.baseUrl}/files/${encodeURIComponent(run.entity)}/${encodeURIComponent(run.project)}/${encodeURIComponent(run.runId)}/file_stream`;
    await this.post('file_stream', url, request, FINAL_STATUSES, patience);
  }

  private async graphql<T>(operation: string, query: string, final: ReadonlySet<number>, variables: Record<string, unknown>): Promise<T> {
    const answer = (await this.post(operation, `${this.baseUrl}/graphql`, { query, variables }, final)) as GraphqlAnswer<T>;
    if (answer.errors?.length) {
      throw serviceError(operation, answer.errors.map((e) => e.message ?? '').join('; '), 'url');
    }
    if (!answer.data) throw serviceError(operation, 'the answer holds no data', 'url');
    return answer.data;
  }

  private async post(call: string, url: string, body: unknown, final: ReadonlySet<number>, patience?: Patience): Promise<unknown> {
    const init = {
      method: 'POST' as const,
      headers: { 'content-type': 'application/json', authorization: this.authorization, 'user-agent': 'drmas-plugin-wandb' },
      body: JSON.stringify(body),
      timeoutMs: this.options.timeoutMs,
    };
    const schedule: RetrySchedule = patience
      ? { retries: Number.MAX_SAFE_INTEGER, delayMs: patience.delayMs, maxDelayMs: patience.maxDelayMs, jitter: 0.25 }
      : { retries: this.options.retries, delayMs: this.options.retryDelayMs };
    const giveUpAt = patience ? Date.now() + patience.deadlineMs : Number.POSITIVE_INFINITY;
    let last: DrmasError | undefined;
    const result = await retrying<unknown>(schedule, async (tryNumber) => {
      if (tryNumber > 1 && Date.now() >= giveUpAt) throw last!;
      const answer = await fetchText(url, init);
      if ('failure' in answer) {
        last = serviceError(call, answer.failure, 'url');
        return { retry: answer.failure };
      }
      if (answer.status >= 200 && answer.status < 300) return { value: answer.text ? JSON.parse(answer.text) : {} };
      const auth = answer.status === 401 || answer.status === 403;
      last = serviceError(call, `HTTP ${answer.status}: ${answer.text.slice(0, 200)}`, auth ? 'key' : 'url');
      if (final.has(answer.status)) throw last;
      return { retry: last.message, afterMs: answer.retryAfterMs };
    });
    if ('value' in result) return result.value;
    throw last!;
  }
}

/** A history line as W&B writes it: JSON with the bare tokens NaN, Infinity and -Infinity for non-finite numbers. */
export function historyLine(record: Record<string, unknown>): string {
  const marks = new Map<string, string>();
  const json = JSON.stringify(record, (_key, value: unknown) => {
    if (typeof value !== 'number' || Number.isFinite(value)) return value;
    const mark = `\u0000${String(value)}\u0000`;
    marks.set(JSON.stringify(mark), String(value));
    return mark;
  });
  let out = json;
  for (const [quoted, token] of marks) out = out.replaceAll(quoted, token);
  return out;
}

/** Stands for a bare NaN or Infinity token while `parseHistoryLine` hands the line to JSON.parse. */
const NON_FINITE_MARK = '$drmas:non-finite$';

/** Reads a line `historyLine` wrote (or W&B's server returned), non-finite tokens included. */
export function parseHistoryLine(line: string): Record<string, unknown> {
  const marked = line.replace(/("(?:[^"\\]|\\.)*")|-?Infinity|NaN/g, (match, quoted: string | undefined) =>
    quoted ? quoted : `{"${NON_FINITE_MARK}":"${match}"}`,
  );
  return JSON.parse(marked, (_key, value: unknown) => {
    if (value && typeof value === 'object' && NON_FINITE_MARK in value) return Number((value as Record<string, string>)[NON_FINITE_MARK]);
    return value;
  }) as Record<string, unknown>;
}

function serviceError(call: string, detail: string, at: 'url' | 'key'): DrmasError {
  return new DrmasError('SERVICE_FAILED', `W&B ${call} failed: ${detail}`, {
    key: at === 'key' ? 'WANDB_API_KEY' : 'wandb.baseUrl',
    hint:
      at === 'key'
        ? 'check WANDB_API_KEY (https://wandb.ai/authorize, or your W&B Server), or set wandb.mode to "disabled"'
        : 'check that the W&B server is up at wandb.baseUrl (or WANDB_BASE_URL), or set wandb.mode to "disabled" to train without it',
  });
}
