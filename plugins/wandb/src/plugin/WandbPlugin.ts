import { randomInt } from 'node:crypto';
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
import { HistoryStream } from '../client/HistoryStream.js';
import { DEFAULT_BASE_URL, WandbClient, type RunPath } from '../client/WandbClient.js';
import { WANDB_MODES, wandbSection, type WandbMode, type WandbSettings } from './wandbConfig.js';

const wandbSchema = { wandb: wandbSection };
type WandbConfig = PluginConfig<typeof wandbSchema>;

export const PLUGIN_NAME = 'wandb';

/** Written into the run directory, so a resumed run logs into the same W&B run. */
export const WANDB_RUN_FILE = 'wandb.json';

/** The exit codes W&B reads from the run's end: 0 finished, else failed; 255 is what its Python SDK reports for Ctrl-C. */
export const EXIT_CODES = { finished: 0, failed: 1, interrupted: 255 } as const;

/** The waits of a run's requests, as wandb-core (wandb b6e29505) has them. */
export interface WandbTiming {
  /**
   * An empty file_stream request goes when nothing has gone for this long: W&B's server marks a run crashed after about
   * five minutes without file_stream traffic (wandb/wandb#12500), and wandb-core heartbeats every 30 s
   * (core/internal/filestream/filestream.go and transmitloop.go).
   */
  heartbeatMs: number;
  /** The first wait before a request is tried again during the run (then doubling, `wandb.retries` times). */
  retryDelayMs: number;
  /** The last request's waits: 2 s doubling to 60 s, as wandb-core's file_stream client, until `wandb.finishTimeoutMs`. */
  finishDelayMs: number;
  finishMaxDelayMs: number;
}

export const WANDB_TIMING: WandbTiming = { heartbeatMs: 30_000, retryDelayMs: 500, finishDelayMs: 2_000, finishMaxDelayMs: 60_000 };

interface RunRecord extends RunPath {
  /** The W&B server, its user info redacted. */
  baseUrl: string;
}

/** The settings with W&B's environment variables filled in where the config is silent. */
export interface ResolvedWandb {
  mode: WandbMode;
  baseUrl: string;
  project: string;
  entity: string | undefined;
  name: string | undefined;
  group: string | undefined;
  tags: string[] | undefined;
}

/** W&B's run ids: 8 characters of [a-z0-9], as its SDKs make them. */
export function newRunId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return Array.from({ length: 8 }, () => alphabet[randomInt(alphabet.length)]).join('');
}

/** The run config in the form W&B's backend stores (its SDKs send `{ key: { value } }` for each top-level key). */
export function wandbConfigJson(config: Record<string, unknown>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(config).map(([key, value]) => [key, { value }])));
}

/** `settings` over W&B's environment variables (WANDB_MODE, WANDB_BASE_URL, WANDB_PROJECT, ...). */
export function resolveWandb(settings: WandbSettings, env: NodeJS.ProcessEnv): ResolvedWandb {
  let mode = settings.mode;
  if (!mode && env.WANDB_MODE) {
    const spelt = ({ run: 'online', dryrun: 'offline' } as Record<string, WandbMode>)[env.WANDB_MODE] ?? env.WANDB_MODE;
    if (!(WANDB_MODES as readonly string[]).includes(spelt)) {
      throw new DrmasError('CONFIG_INVALID', `WANDB_MODE ${JSON.stringify(env.WANDB_MODE)} is not a W&B mode`, {
        key: 'wandb.mode',
        hint: `set WANDB_MODE (or wandb.mode) to one of ${WANDB_MODES.join(', ')}`,
      });
    }
    mode = spelt as WandbMode;
  }
  const tags = env.WANDB_TAGS?.split(',')
    .map((tag) => tag.trim())
    .filter(Boolean);
  return {
    mode: mode ?? 'online',
    baseUrl: settings.baseUrl ?? env.WANDB_BASE_URL ?? DEFAULT_BASE_URL,
    project: settings.project ?? env.WANDB_PROJECT ?? 'drmas',
    entity: settings.entity ?? env.WANDB_ENTITY,
    name: settings.name ?? env.WANDB_NAME,
    group: settings.group ?? env.WANDB_RUN_GROUP,
    tags: settings.tags ?? (tags?.length ? tags : undefined),
  };
}

/**
 * Tracks the run in Weights & Biases over its HTTP API (see the README for why not `@wandb/sdk`): at `setup` a W&B run
 * (or, on `--resume`, the run `wandb.json` names, its history continued where the server's ends) with the resolved
 * config (its secret keys redacted); every metrics line through the MetricsSink role as a history line at its step; at `shutdown` the exit code.
 * A server that cannot be reached at `setup` stops the run before training; one that fails later costs a warning, not
 * the run: the lines stay pending and go again with the next step (and they are all in metrics.jsonl).
 */
export class WandbPlugin implements Plugin<unknown, typeof wandbSchema> {
  readonly name = PLUGIN_NAME;
  readonly configSchema = wandbSchema;
  readonly secretEnv: SecretEnv = { WANDB_API_KEY: 'value', WANDB_BASE_URL: 'url' };
  private stream: HistoryStream | undefined;
  private run: RunContext | undefined;
  private failed = false;
  private warned = new Set<string>();

  /** `timing`: wandb-core's clock by default; tests compress it, as their stand-in compresses the server's crash sweep. */
  constructor(
    private readonly env: NodeJS.ProcessEnv = process.env,
    private readonly timing: WandbTiming = WANDB_TIMING,
  ) {}

  register(ctx: RegisterContext<WandbConfig>): void {
    ctx.bind(RunFile).toConstantValue({ path: WANDB_RUN_FILE, kind: 'artifact' });
    ctx.bind(MetricsSink).toConstantValue({
      write: ({ step, metrics }) => {
        if (this.stream && !this.stream.log(step, metrics)) {
          this.warn(
            'steps',
            `W&B already holds step ${step} from the interrupted run, and W&B's steps only go up: the steps logged there before are kept (this run's values are in metrics.jsonl)`,
          );
        }
      },
    });
  }

  apply(kernel: ApplyContext<WandbConfig>): void {
    const { secrets } = kernel.inject({ secrets: Secrets });
    const settings = () => resolveWandb(kernel.config.wandb, this.env);

    kernel.hooks.validate.tap(PLUGIN_NAME, () => {
      const { mode } = settings();
      if (mode === 'offline') {
        throw new DrmasError('CONFIG_INVALID', 'wandb.mode "offline" is not supported: this plugin has no offline store for `wandb sync`', {
          key: 'wandb.mode',
          hint: 'use "disabled" (metrics.jsonl keeps every metric), or "online" against a W&B Server you run yourself (wandb.baseUrl)',
        });
      }
      if (mode === 'online' && !this.env.WANDB_API_KEY) {
        throw new DrmasError('CONFIG_INVALID', 'no W&B API key: WANDB_API_KEY is not set', {
          key: 'WANDB_API_KEY',
          hint: 'export WANDB_API_KEY (from https://wandb.ai/authorize, or your W&B Server), or set wandb.mode to "disabled" to train without W&B ("offline" is not supported: see the plugin README)',
        });
      }
    });

    kernel.hooks.setup.tapPromise({ name: PLUGIN_NAME, stage: Stage.REPORT }, async (run) => {
      this.run = run;
      this.failed = false;
      this.warned.clear();
      this.stream = undefined;
      const resolved = settings();
      if (resolved.mode === 'disabled') {
        run.log('wandb: disabled (wandb.mode)');
        return;
      }
      const { timeoutMs, retries, logConfig, finishTimeoutMs } = kernel.config.wandb;
      const { retryDelayMs, heartbeatMs, finishDelayMs, finishMaxDelayMs } = this.timing;
      const client = new WandbClient({ baseUrl: resolved.baseUrl, apiKey: this.env.WANDB_API_KEY!, timeoutMs, retries, retryDelayMs });
      const file = path.join(run.runDir, WANDB_RUN_FILE);
      const previous = run.resumeFrom && existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as RunRecord) : undefined;
      const shownUrl = redactUrl(client.baseUrl);
      const resuming = previous?.baseUrl === shownUrl ? previous : undefined;
      const entity = resuming?.entity ?? resolved.entity ?? (await client.viewerEntity());
      const where = await client.upsertRun({
        entity,
        project: resuming?.project ?? resolved.project,
        runId: resuming?.runId ?? newRunId(),
        displayName: resolved.name ?? path.basename(run.runDir),
        group: resolved.group,
        tags: resolved.tags,
        config: logConfig ? wandbConfigJson(secrets.config()) : undefined,
      });
      const status = resuming ? await client.resumeStatus(where) : undefined;
      writeFileSync(file, `${JSON.stringify({ baseUrl: shownUrl, ...pick(where) } satisfies RunRecord, null, 2)}\n`);
      this.stream = new HistoryStream(
        client,
        pick(where),
        status,
        (error) =>
          this.warn('send', `${error.message}; the lines not taken go again with the next request (every metric is in metrics.jsonl)`),
        { heartbeatMs, finish: { deadlineMs: finishTimeoutMs, delayMs: finishDelayMs, maxDelayMs: finishMaxDelayMs } },
      );
      const url = `${shownUrl.replace('api.wandb', 'wandb')}/${where.entity}/${where.project}/runs/${where.runId}`;
      run.log(
        resuming
          ? `wandb: resuming run ${where.displayName} after its history line ${status?.historyLineCount ?? 0} at ${url}`
          : `wandb: run ${where.displayName} at ${url}`,
      );
    });

    kernel.hooks.failed.tap(PLUGIN_NAME, () => {
      this.failed = true;
    });

    kernel.hooks.shutdown.tapPromise({ name: PLUGIN_NAME, stage: Stage.REPORT }, async () => {
      const { stream, run } = this;
      this.stream = undefined;
      if (!stream) return;
      const exitcode = this.failed ? EXIT_CODES.failed : run?.signal.aborted ? EXIT_CODES.interrupted : EXIT_CODES.finished;
      const unsent = await stream.finish(exitcode);
      if (unsent > 0) this.warn('end', `${unsent} history lines never reached W&B (they are in metrics.jsonl)`);
    });
  }

  /** One warning per kind and run: a server that is down would otherwise warn at every step. */
  private warn(kind: string, message: string): void {
    if (this.warned.has(kind)) return;
    this.warned.add(kind);
    (this.run?.log ?? console.warn)(`warning: wandb: ${message}`);
  }
}

function pick({ entity, project, runId }: RunPath): RunPath {
  return { entity, project, runId };
}

/** The plugin module's default export: `plugins: ['wandb']`. */
export default function wandbPlugin(): WandbPlugin {
  return new WandbPlugin();
}
