import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  Secrets,
  DrmasError,
  MetricsSink,
  redactUrl,
  RunFile,
  Stage,
  type ApplyContext,
  type PluginConfig,
  type Plugin,
  type RegisterContext,
  type RunContext,
  type SecretEnv,
} from '@drmas/core';
import { authorizationFromEnv, MlflowClient, type KeyValue, type RunStatus } from '../client/MlflowClient.js';
import { mlflowSection } from './mlflowConfig.js';
import { configParams, mlflowName, mlflowValue } from './mlflowNames.js';

const mlflowSchema = { mlflow: mlflowSection };
type MlflowConfig = PluginConfig<typeof mlflowSchema>;

export const PLUGIN_NAME = 'mlflow';

/** Written into the run directory, so a resumed run logs into the same MLflow run. */
export const MLFLOW_RUN_FILE = 'mlflow.json';

interface RunRecord {
  /** The tracking server, its user info redacted. */
  trackingUri: string;
  experimentId: string;
  runId: string;
}

/**
 * Tracks the run in MLflow: at `setup` the experiment (created when missing) and a run (or, on `--resume`, the run
 * `mlflow.json` names), with the resolved config as params (its secret keys redacted); every metrics line through the MetricsSink role; at
 * `shutdown` the run's status (FINISHED, FAILED, or KILLED when interrupted). A tracking server that cannot be
 * reached at `setup` stops the run before training; one that fails later costs a warning, not the run (the metrics
 * stay in metrics.jsonl).
 */
export class MlflowPlugin implements Plugin<unknown, typeof mlflowSchema> {
  readonly name = PLUGIN_NAME;
  readonly configSchema = mlflowSchema;
  /** MLflow's own variables (mlflow/environment_variables.py) that hold credentials; the username is not one. */
  readonly secretEnv: SecretEnv = { MLFLOW_TRACKING_URI: 'url', MLFLOW_TRACKING_TOKEN: 'value', MLFLOW_TRACKING_PASSWORD: 'value' };
  private client: MlflowClient | undefined;
  private runId: string | undefined;
  private run: RunContext | undefined;
  private failed = false;
  private readonly warned = new Set<string>();

  constructor(private readonly env: NodeJS.ProcessEnv = process.env) {}

  register(ctx: RegisterContext<MlflowConfig>): void {
    ctx.bind(RunFile).toConstantValue({ path: MLFLOW_RUN_FILE, kind: 'artifact' });
    ctx.bind(MetricsSink).toConstantValue({
      write: async ({ step, metrics }) => {
        if (!this.client || !this.runId) return;
        const timestamp = Date.now();
        const batch = Object.entries(metrics).map(([key, value]) => ({ key: mlflowName(key), value: mlflowValue(value), timestamp, step }));
        try {
          await this.client.logBatch(this.runId, { metrics: batch });
        } catch (error) {
          this.warn('failure', `the metrics of step ${step} were not logged (they are in metrics.jsonl): ${(error as Error).message}`);
        }
      },
    });
  }

  apply(kernel: ApplyContext<MlflowConfig>): void {
    const { secrets } = kernel.inject({ secrets: Secrets });
    const settings = () => kernel.config.mlflow;
    const trackingUri = () => settings().trackingUri ?? this.env.MLFLOW_TRACKING_URI;

    kernel.hooks.validate.tap(PLUGIN_NAME, () => {
      const uri = trackingUri();
      if (!uri) {
        throw new DrmasError(
          'CONFIG_INVALID',
          'no MLflow tracking server: mlflow.trackingUri is not set and neither is MLFLOW_TRACKING_URI',
          {
            key: 'mlflow.trackingUri',
            hint: 'set mlflow.trackingUri (e.g. "http://localhost:5000") or the MLFLOW_TRACKING_URI environment variable, or drop the mlflow plugin',
          },
        );
      }
      if (!/^https?:\/\/[^/]/.test(uri)) {
        throw new DrmasError('CONFIG_INVALID', `MLFLOW_TRACKING_URI ${JSON.stringify(redactUrl(uri))} is not an http(s) URL`, {
          key: 'mlflow.trackingUri',
          hint: 'this plugin talks to a tracking server over REST; a local folder (file:) or a database URI is not supported',
        });
      }
    });

    kernel.hooks.setup.tapPromise({ name: PLUGIN_NAME, stage: Stage.REPORT }, async (run) => {
      const { experiment, runName, tags, logParams, timeoutMs, retries } = settings();
      const uri = trackingUri()!;
      const shownUri = redactUrl(uri);
      this.run = run;
      this.failed = false;
      this.warned.clear();
      this.client = new MlflowClient({
        trackingUri: uri,
        authorization: authorizationFromEnv(this.env),
        timeoutMs,
        retries,
        retryDelayMs: 500,
      });
      const file = path.join(run.runDir, MLFLOW_RUN_FILE);
      const previous = run.resumeFrom && existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as RunRecord) : undefined;
      if (previous && previous.trackingUri === shownUri) {
        this.runId = previous.runId;
        await this.client.updateRun(this.runId, 'RUNNING');
        run.log(`mlflow: resuming run ${this.runId} of experiment ${previous.experimentId} at ${shownUri}`);
        return;
      }
      const chosen = await this.client.experiment(experiment);
      if (chosen.deleted.length) {
        this.warn(
          'experiment',
          `the experiment ${chosen.deleted.map((name) => JSON.stringify(name)).join(', ')} is deleted, so this run goes to ${JSON.stringify(chosen.name)}; restore it (mlflow experiments restore) to log there again, or free the name (mlflow gc)`,
        );
      }
      const experimentId = chosen.id;
      const name = runName ?? path.basename(run.runDir);
      this.runId = await this.client.createRun(experimentId, name, [
        { key: 'mlflow.runName', value: name },
        { key: 'mlflow.source.name', value: 'drmas' },
        { key: 'drmas.runDir', value: run.runDir },
        ...Object.entries(tags).map(([key, value]) => ({ key, value })),
      ]);
      writeFileSync(file, `${JSON.stringify({ trackingUri: shownUri, experimentId, runId: this.runId } satisfies RunRecord, null, 2)}\n`);
      if (logParams) await this.logParams(configParams(secrets.config()));
      run.log(`mlflow: run ${this.runId} in experiment ${chosen.name} (${experimentId}) at ${shownUri}`);
    });

    kernel.hooks.failed.tap(PLUGIN_NAME, () => {
      this.failed = true;
    });

    kernel.hooks.shutdown.tapPromise({ name: PLUGIN_NAME, stage: Stage.REPORT }, async () => {
      const { client, runId, run } = this;
      this.client = undefined;
      if (!client || !runId) return;
      const status: RunStatus = this.failed ? 'FAILED' : run?.signal.aborted ? 'KILLED' : 'FINISHED';
      try {
        await client.updateRun(runId, status);
      } catch (error) {
        this.warn('failure', `the run's status (${status}) was not set: ${(error as Error).message}`);
      }
    });
  }

  /** The config as params: a param the server refuses, or the server failing, costs a warning, not the run. */
  private async logParams(params: KeyValue[]): Promise<void> {
    try {
      const { refused, cut, renamed } = await this.client!.logParams(this.runId!, params);
      const problems = [
        refused.length && `${refused.length} the server refused were left out (${refused.join(', ')})`,
        cut.length && `${cut.length} were cut to 500 characters, the limit of MLflow servers before 2.8 (${cut.join(', ')})`,
        renamed.length && `${renamed.length} had a name taken by an earlier param and got a _2 suffix (${renamed.join(', ')})`,
      ].filter(Boolean);
      if (problems.length)
        this.warn('params', `of the config's params, ${problems.join('; ')}; config.json in the run directory has them all`);
    } catch (error) {
      this.warn('params', `the config was not logged as params (config.json in the run directory has it): ${(error as Error).message}`);
    }
  }

  /** One warning per kind and run: a server that is down would otherwise warn at every step. */
  private warn(kind: 'experiment' | 'params' | 'failure', message: string): void {
    if (this.warned.has(kind)) return;
    this.warned.add(kind);
    const more = kind === 'failure' ? '; further MLflow failures of this run are not reported' : '';
    (this.run?.log ?? console.warn)(`warning: mlflow: ${message}${more}`);
  }
}

/** The plugin module's default export: `plugins: ['mlflow']`. */
export default function mlflowPlugin(): MlflowPlugin {
  return new MlflowPlugin();
}
