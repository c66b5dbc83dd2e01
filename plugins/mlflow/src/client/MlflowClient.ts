import { DrmasError, fetchText, retrying } from '@drmas/core';

/** MLflow's LogBatch limits (mlflow/utils/validation.py): per request at most these many of each, 1000 in all. */
export const MAX_METRICS_PER_BATCH = 1000;
export const MAX_PARAMS_TAGS_PER_BATCH = 100;
/** The longest param value of MLflow 2.8 and later (3.x included); a longer value is cut to it. */
export const MAX_PARAM_VALUE_LENGTH = 6000;
/** The longest param value of MLflow 2.0 to 2.7 servers (raised to 6000 in 2.8). */
export const OLD_MAX_PARAM_VALUE_LENGTH = 500;
/** How many `<name>-2`, `<name>-3`, ... a deleted experiment's name is tried with before giving up. */
const MAX_EXPERIMENT_SUFFIX = 100;

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

/** The experiment a run goes into: `name`, or the first free `<name>-N` when experiments of those names are deleted. */
export interface ExperimentChoice {
  id: string;
  name: string;
  /** The names passed over because their experiment is deleted (MLflow keeps a deleted name until `mlflow gc`). */
  deleted: string[];
}

/** What `logParams` could not log as given. */
export interface ParamsOutcome {
  /** Params the server refused even alone (a name it does not take); not logged. */
  refused: string[];
  /** Params logged with their value cut to 500 characters (an MLflow server before 2.8). */
  cut: string[];
  /** Params renamed `<key>_2`, ... because an earlier param had the same name after `mlflowName`. */
  renamed: string[];
}

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

  /**
   * The active experiment named `name`, created when no experiment has the name. A deleted experiment keeps its name
   * until `mlflow gc` (get-by-name returns it, runs cannot be created in it, and creating the name again is refused),
   * where MLflow's own client stops (`set_experiment`: "restore the experiment, or permanently delete it"); here the
   * run goes to the first `<name>-2`, `<name>-3`, ... that is active or free, and the caller says so.
   */
  async experiment(name: string): Promise<ExperimentChoice> {
    const deleted: string[] = [];
    for (let n = 1; n <= MAX_EXPERIMENT_SUFFIX; n++) {
      const candidate = n === 1 ? name : `${name}-${n}`;
      const id = await this.activeExperimentId(candidate);
      if (id !== undefined) return { id, name: candidate, deleted };
      deleted.push(candidate);
    }
    throw new DrmasError('SERVICE_FAILED', `MLflow experiments ${name} to ${name}-${MAX_EXPERIMENT_SUFFIX} are all deleted`, {
      key: 'mlflow.experiment',
      hint: 'restore one (mlflow experiments restore), free the names (mlflow gc), or set mlflow.experiment to another name',
    });
  }

  /** The id of the active experiment named `name`, creating it when none has the name; undefined when it is deleted. */
  private async activeExperimentId(name: string): Promise<string | undefined> {
    const found = await this.findExperiment(name);
    if (found) return found.lifecycle_stage === 'deleted' ? undefined : found.experiment_id;
    try {
      const created = await this.call<{ experiment_id: string }>('POST', 'experiments/create', { name });
      return created.experiment_id;
    } catch (error) {
      // Another process created it between the two calls.
      const again = await this.findExperiment(name);
      if (again) return again.lifecycle_stage === 'deleted' ? undefined : again.experiment_id;
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

  /** Metrics and tags in as many LogBatch requests as MLflow's limits need (params: `logParams`). */
  async logBatch(runId: string, batch: { metrics?: MlflowMetric[]; tags?: KeyValue[] }): Promise<void> {
    for (const metrics of chunks(batch.metrics ?? [], MAX_METRICS_PER_BATCH))
      await this.call('POST', 'runs/log-batch', { run_id: runId, metrics });
    for (const tags of chunks(batch.tags ?? [], MAX_PARAMS_TAGS_PER_BATCH))
      await this.call('POST', 'runs/log-batch', { run_id: runId, tags });
  }

  /**
   * Params in batches of MLflow's limit, names made unique first (the server refuses a batch holding one name twice,
   * equal values included). A batch the server refuses as invalid goes again param by param, so one bad param costs
   * only itself: one refused whole is retried with its value cut to 500 characters (MLflow before 2.8), and one still
   * refused is left out. Other failures (the server down, credentials) throw.
   */
  async logParams(runId: string, params: readonly KeyValue[]): Promise<ParamsOutcome> {
    const outcome: ParamsOutcome = { refused: [], cut: [], renamed: [] };
    const seen = new Set<string>();
    const unique = params.map((param) => {
      if (!seen.has(param.key)) {
        seen.add(param.key);
        return param;
      }
      let n = 2;
      while (seen.has(`${param.key}_${n}`)) n++;
      const key = `${param.key}_${n}`;
      seen.add(key);
      outcome.renamed.push(param.key);
      return { key, value: param.value };
    });
    const refusedAsInvalid = async (batch: KeyValue[]): Promise<boolean> => {
      try {
        await this.call('POST', 'runs/log-batch', { run_id: runId, params: batch });
        return false;
      } catch (error) {
        if ((error as { mlflowCode?: string }).mlflowCode === 'INVALID_PARAMETER_VALUE') return true;
        throw error;
      }
    };
    for (const batch of chunks(unique, MAX_PARAMS_TAGS_PER_BATCH)) {
      if (!(await refusedAsInvalid(batch))) continue;
      for (const param of batch) {
        if (!(await refusedAsInvalid([param]))) continue;
        const short = { key: param.key, value: param.value.slice(0, OLD_MAX_PARAM_VALUE_LENGTH) };
        if (short.value.length < param.value.length && !(await refusedAsInvalid([short]))) outcome.cut.push(param.key);
        else outcome.refused.push(param.key);
      }
    }
    return outcome;
  }

  private async findExperiment(name: string): Promise<{ experiment_id: string; lifecycle_stage?: string } | undefined> {
    try {
      const found = await this.call<{ experiment: { experiment_id: string; lifecycle_stage?: string } }>(
        'GET',
        `experiments/get-by-name?experiment_name=${encodeURIComponent(name)}`,
      );
      return found.experiment;
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
