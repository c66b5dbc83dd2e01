import { DrmasError, fetchText, retrying } from '@drmas/core';

/** MLflow's LogBatch limits (mlflow/utils/validation.py): per request at most these many of each, 1000 in all. */
export const MAX_METRICS_PER_BATCH = 1000;
export const MAX_PARAMS_TAGS_PER_BATCH = 100;
/** MLflow 2's longest param value; a longer value is cut to it. */
export const MAX_PARAM_VALUE_LENGTH = 6000;

export interface MlflowMetric {
  key: string;
  /** A finite number, or the protobuf JSON spellings of the others: `NaN`, `Infinity`, `-Infinity`. */
  value: number | 'NaN' | 'Infinity' | '-Infinity';
  /** Milliseconds since the epoch. */
  timestamp: number;
  step: number;
}

export interface KeyValue {
  key: string;
  value: string;
}

export type RunStatus = 'RUNNING' | 'FINISHED' | 'FAILED' | 'KILLED';

export interface MlflowClientOptions {
  /** The tracking server, e.g. `http://localhost:5000`. */
  trackingUri: string;
  /** `Authorization` header value (`Bearer ...` or `Basic ...`), if the server needs one. */
  authorization?: string;
  /** Per request. */
  timeoutMs: number;
  /** Further tries after a failed request (network error, 429 or 5xx), with doubling waits from `retryDelayMs`. */
  retries: number;
  retryDelayMs: number;
}

interface MlflowErrorBody {
  error_code?: string;
  message?: string;
}

/** The `Authorization` header MLflow's clients send, from MLflow's environment variables. */
export function authorizationFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  if (env.MLFLOW_TRACKING_TOKEN) return `Bearer ${env.MLFLOW_TRACKING_TOKEN}`;
  if (env.MLFLOW_TRACKING_USERNAME) {
    return `Basic ${Buffer.from(`${env.MLFLOW_TRACKING_USERNAME}:${env.MLFLOW_TRACKING_PASSWORD ?? ''}`).toString('base64')}`;
  }
  return undefined;
}

/** Splits `items` into runs of at most `size`. */
function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * The few MLflow REST calls (`/api/2.0/mlflow/...`) a metrics sink needs, over Node's fetch. Failures are
 * SERVICE_FAILED errors naming the endpoint, the HTTP status and MLflow's `error_code`; network errors, 429 and 5xx
 * are retried.
 */
export class MlflowClient {
  private readonly base: string;

  constructor(private readonly options: MlflowClientOptions) {
    this.base = options.trackingUri.replace(/\/+$/, '');
  }

  /** The experiment's id, creating it when no experiment has the name. */
  async experimentId(name: string): Promise<string> {
    const found = await this.findExperiment(name);
    if (found) return found;
    try {
      const created = await this.call<{ experiment_id: string }>('POST', 'experiments/create', { name });
      return created.experiment_id;
    } catch (error) {
      // Another process created it between the two calls.
      const again = await this.findExperiment(name);
      if (again) return again;
      throw error;
    }
  }

  async createRun(experimentId: string, runName: string, tags: KeyValue[]): Promise<string> {
    const response = await this.call<{ run: { info: { run_id: string } } }>('POST', 'runs/create', {
      experiment_id: experimentId,
      run_name: runName,
      start_time: Date.now(),
      tags,
    });
    return response.run.info.run_id;
  }

  async updateRun(runId: string, status: RunStatus): Promise<void> {
    await this.call('POST', 'runs/update', { run_id: runId, status, ...(status === 'RUNNING' ? {} : { end_time: Date.now() }) });
  }

  /** Metrics, params and tags in as many LogBatch requests as MLflow's limits need. */
  async logBatch(runId: string, batch: { metrics?: MlflowMetric[]; params?: KeyValue[]; tags?: KeyValue[] }): Promise<void> {
    for (const metrics of chunks(batch.metrics ?? [], MAX_METRICS_PER_BATCH))
      await this.call('POST', 'runs/log-batch', { run_id: runId, metrics });
    for (const params of chunks(batch.params ?? [], MAX_PARAMS_TAGS_PER_BATCH))
      await this.call('POST', 'runs/log-batch', { run_id: runId, params });
    for (const tags of chunks(batch.tags ?? [], MAX_PARAMS_TAGS_PER_BATCH))
      await this.call('POST', 'runs/log-batch', { run_id: runId, tags });
  }

  private async findExperiment(name: string): Promise<string | undefined> {
    try {
      const found = await this.call<{ experiment: { experiment_id: string } }>(
        'GET',
        `experiments/get-by-name?experiment_name=${encodeURIComponent(name)}`,
      );
      return found.experiment.experiment_id;
    } catch (error) {
      if ((error as { mlflowCode?: string }).mlflowCode === 'RESOURCE_DOES_NOT_EXIST') return undefined;
      throw error;
    }
  }

  private async call<T = unknown>(method: 'GET' | 'POST', endpoint: string, body?: unknown): Promise<T> {
    const url = `${this.base}/api/2.0/mlflow/${endpoint}`;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.options.authorization) headers.authorization = this.options.authorization;
    const init = { method, headers, body: body === undefined ? undefined : JSON.stringify(body), timeoutMs: this.options.timeoutMs };
    let last: DrmasError | undefined;
    const result = await retrying<T>({ retries: this.options.retries, delayMs: this.options.retryDelayMs }, async () => {
      const answer = await fetchText(url, init);
      if ('failure' in answer) {
        last = serviceError(endpoint, answer.failure);
        return { retry: answer.failure };
      }
      if (answer.status >= 200 && answer.status < 300) return { value: (answer.text ? JSON.parse(answer.text) : {}) as T };
      let parsed: MlflowErrorBody;
      try {
        parsed = JSON.parse(answer.text) as MlflowErrorBody;
      } catch {
        parsed = { message: answer.text.slice(0, 200) };
      }
      last = serviceError(endpoint, `HTTP ${answer.status}${parsed.error_code ? ` ${parsed.error_code}` : ''}: ${parsed.message ?? ''}`);
      Object.assign(last, { mlflowCode: parsed.error_code, status: answer.status });
      if (answer.status !== 429 && answer.status < 500) throw last;
      return { retry: last.message };
    });
    if ('value' in result) return result.value;
    throw last!;
  }
}

function serviceError(endpoint: string, detail: string): DrmasError {
  return new DrmasError('SERVICE_FAILED', `MLflow ${endpoint.split('?')[0]} failed: ${detail}`, {
    key: 'mlflow.trackingUri',
    hint: 'check that the MLflow tracking server is up at mlflow.trackingUri (or MLFLOW_TRACKING_URI) and that the credentials (MLFLOW_TRACKING_TOKEN, or _USERNAME and _PASSWORD) are right',
  });
}
