import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { LoopbackStandIn } from '../../../test/support/loopbackServer.js';

/**
 * A local HTTP stand-in for an MLflow tracking server, for the default suite (test/interop/mlflow.test.ts runs the
 * real `mlflow server`). It implements the REST endpoints the plugin calls and rejects what a real 3.x server rejects
 * (mlflow 3.17 `mlflow/server/handlers.py`, `mlflow/utils/validation.py`, `mlflow/store/tracking/sqlalchemy_store.py`):
 * unknown runs; names outside MLflow's character set or that a path normalization would change (`path_not_unique`);
 * LogBatch requests over its limits or naming one param twice (equal values included); a param written again with
 * another value; param values over its limit (`maxParamValueLength`: 6000, or 500 to act as MLflow 2.0 to 2.7);
 * metric values that are not numbers or the protobuf JSON spellings of non-finite ones. A deleted experiment keeps its
 * name: get-by-name returns it (lifecycle_stage "deleted"), creating the name again is RESOURCE_ALREADY_EXISTS, and a
 * run cannot be created in it.
 */

export interface StoredMetric {
  key: string;
  value: number | string;
  timestamp: number;
  step: number;
}

export interface StoredRun {
  runId: string;
  experimentId: string;
  runName: string;
  status: string;
  startTime: number;
  endTime?: number;
  tags: Map<string, string>;
  params: Map<string, string>;
  metrics: StoredMetric[];
  /** Every status set by runs/update, in order. */
  statuses: string[];
}

const NAME = /^[/\w.\- :]*$/;

/** MLflow's `path_not_unique`: the name is not what Python's posixpath.normpath makes of it, or escapes its folder. */
function pathNotUnique(name: string): boolean {
  const norm = name === '' ? '.' : path.posix.normalize(name).replace(/(.)\/+$/, '$1');
  return norm !== name || norm === '.' || norm.startsWith('..') || norm.startsWith('/');
}
const NON_FINITE = new Set(['NaN', 'Infinity', '-Infinity']);

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class MlflowStandIn extends LoopbackStandIn {
  readonly experiments = new Map<string, { id: string; name: string; lifecycleStage: 'active' | 'deleted' }>();
  /** The longest param value taken: 6000 as MLflow 2.8 and later, 500 as 2.0 to 2.7. */
  maxParamValueLength = 6000;
  readonly runs = new Map<string, StoredRun>();
  /** Every request as `METHOD /path`, in order. */
  readonly requests: string[] = [];
  private failures: Array<{ status: number; endpoint?: string }> = [];
  private nextId = 1;

  constructor(private readonly token?: string) {
    super();
  }

  /** Deletes an experiment as MLflow's UI does: it stays, with its name, in the lifecycle stage "deleted". */
  deleteExperiment(name: string): void {
    this.experiments.get(name)!.lifecycleStage = 'deleted';
  }

  /** The next `count` requests (to `endpoint` only, when given) fail with `status`. */
  failNext(count: number, status: number, endpoint?: string): void {
    for (let i = 0; i < count; i++) this.failures.push({ status, endpoint });
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const endpoint = url.pathname.replace(/^\/api\/2\.0\/mlflow\//, '');
    this.requests.push(`${req.method} ${url.pathname}`);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const failure = this.failures.findIndex((f) => !f.endpoint || f.endpoint === endpoint);
    if (failure >= 0) {
      const [{ status }] = this.failures.splice(failure, 1) as [{ status: number }];
      send(status, { error_code: 'INTERNAL_ERROR', message: 'injected failure' });
      return;
    }
    try {
      if (this.token && req.headers.authorization !== `Bearer ${this.token}`) throw new ApiError(401, 'UNAUTHENTICATED', 'bad credentials');
      const body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>) : {};
      send(200, this.route(req.method ?? 'GET', endpoint, url.searchParams, body));
    } catch (error) {
      if (error instanceof ApiError) send(error.status, { error_code: error.code, message: error.message });
      else send(500, { error_code: 'INTERNAL_ERROR', message: String(error) });
    }
  }

  private route(method: string, endpoint: string, query: URLSearchParams, body: Record<string, unknown>): unknown {
    switch (`${method} ${endpoint}`) {
      case 'GET experiments/get-by-name': {
        const experiment = this.experiments.get(query.get('experiment_name') ?? '');
        if (!experiment)
          throw new ApiError(404, 'RESOURCE_DOES_NOT_EXIST', `Could not find experiment with name ${query.get('experiment_name')}`);
        return { experiment: { experiment_id: experiment.id, name: experiment.name, lifecycle_stage: experiment.lifecycleStage } };
      }
      case 'POST experiments/create': {
        const name = body.name;
        if (typeof name !== 'string' || !name)
          throw new ApiError(400, 'INVALID_PARAMETER_VALUE', "Missing value for required parameter 'name'");
        if (this.experiments.has(name)) throw new ApiError(400, 'RESOURCE_ALREADY_EXISTS', `Experiment '${name}' already exists.`);
        const id = String(this.nextId++);
        this.experiments.set(name, { id, name, lifecycleStage: 'active' });
        return { experiment_id: id };
      }
      case 'POST runs/create': {
        const experimentId = body.experiment_id;
        const experiment = [...this.experiments.values()].find((e) => e.id === experimentId);
        if (!experiment) throw new ApiError(404, 'RESOURCE_DOES_NOT_EXIST', `No Experiment with id=${String(experimentId)} exists`);
        if (experiment.lifecycleStage !== 'active') {
          throw new ApiError(
            400,
            'INVALID_PARAMETER_VALUE',
            `The experiment ${experiment.id} must be in the 'active' state. Current state is ${experiment.lifecycleStage}.`,
          );
        }
        if (typeof body.start_time !== 'number' || !Number.isInteger(body.start_time))
          throw new ApiError(400, 'INVALID_PARAMETER_VALUE', 'start_time must be an int64');
        const runId = `run${this.nextId++}`.padEnd(32, '0');
        const tags = new Map((body.tags as Array<{ key: string; value: string }> | undefined)?.map((t) => [t.key, t.value]) ?? []);
        const run: StoredRun = {
          runId,
          experimentId: experimentId as string,
          runName: typeof body.run_name === 'string' ? body.run_name : '',
          status: 'RUNNING',
          startTime: body.start_time,
          tags,
          params: new Map(),
          metrics: [],
          statuses: [],
        };
        this.runs.set(runId, run);
        return { run: { info: { run_id: runId, experiment_id: experimentId, status: 'RUNNING', run_name: run.runName }, data: {} } };
      }
      case 'POST runs/update': {
        const run = this.runOf(body.run_id);
        if (!['RUNNING', 'SCHEDULED', 'FINISHED', 'FAILED', 'KILLED'].includes(String(body.status))) {
          throw new ApiError(400, 'INVALID_PARAMETER_VALUE', `Invalid status ${String(body.status)}`);
        }
        run.status = String(body.status);
        run.statuses.push(run.status);
        if (typeof body.end_time === 'number') run.endTime = body.end_time;
        return { run_info: { run_id: run.runId, status: run.status } };
      }
      case 'POST runs/log-batch':
        this.logBatch(body);
        return {};
      default:
        throw new ApiError(404, 'ENDPOINT_NOT_FOUND', `No endpoint ${method} ${endpoint}`);
    }
  }

  private runOf(id: unknown): StoredRun {
    const run = this.runs.get(String(id));
    if (!run) throw new ApiError(404, 'RESOURCE_DOES_NOT_EXIST', `Run '${String(id)}' not found`);
    return run;
  }

  private logBatch(body: Record<string, unknown>): void {
    const run = this.runOf(body.run_id);
    const metrics = (body.metrics ?? []) as StoredMetric[];
    const params = (body.params ?? []) as Array<{ key: string; value: string }>;
    const tags = (body.tags ?? []) as Array<{ key: string; value: string }>;
    if (metrics.length > 1000)
      throw new ApiError(
        400,
        'INVALID_PARAMETER_VALUE',
        `A batch logging request can contain at most 1000 metrics. Got ${metrics.length} metrics.`,
      );
    if (params.length > 100)
      throw new ApiError(
        400,
        'INVALID_PARAMETER_VALUE',
        `A batch logging request can contain at most 100 params. Got ${params.length} params.`,
      );
    if (tags.length > 100)
      throw new ApiError(400, 'INVALID_PARAMETER_VALUE', `A batch logging request can contain at most 100 tags. Got ${tags.length} tags.`);
    if (metrics.length + params.length + tags.length > 1000)
      throw new ApiError(400, 'INVALID_PARAMETER_VALUE', 'at most 1000 entities per batch');
    for (const { key } of [...metrics, ...params]) {
      if (typeof key !== 'string' || !NAME.test(key) || pathNotUnique(key) || key.length > 250)
        throw new ApiError(400, 'INVALID_PARAMETER_VALUE', `Invalid value '${key}' for parameter 'key' supplied`);
    }
    const keys = params.map((p) => p.key);
    const duplicates = keys.filter((key, i) => keys.indexOf(key) !== i);
    if (duplicates.length) {
      throw new ApiError(
        400,
        'INVALID_PARAMETER_VALUE',
        `Duplicate parameter keys have been submitted: ${JSON.stringify(duplicates)}. Please ensure the request contains only one param value per param key.`,
      );
    }
    for (const m of metrics) {
      const valueOk = typeof m.value === 'number' ? Number.isFinite(m.value) : NON_FINITE.has(m.value);
      if (!valueOk || !Number.isInteger(m.timestamp) || !Number.isInteger(m.step)) {
        throw new ApiError(400, 'INVALID_PARAMETER_VALUE', `Invalid metric ${JSON.stringify(m)}`);
      }
    }
    for (const p of params) {
      if (typeof p.value !== 'string' || p.value.length > this.maxParamValueLength)
        throw new ApiError(400, 'INVALID_PARAMETER_VALUE', `Param value exceeds the maximum length of ${this.maxParamValueLength}`);
      const old = run.params.get(p.key);
      if (old !== undefined && old !== p.value) {
        throw new ApiError(
          400,
          'INVALID_PARAMETER_VALUE',
          `Changing param values is not allowed. Param with key='${p.key}' was already logged`,
        );
      }
    }
    run.metrics.push(...metrics);
    for (const p of params) run.params.set(p.key, p.value);
    for (const t of tags) run.tags.set(t.key, t.value);
  }
}
