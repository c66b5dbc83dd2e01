import { existsSync } from 'node:fs';
import {
  RunFile,
  Stage,
  type ApplyContext,
  type Metrics,
  type Plugin,
  type PluginConfig,
  type RegisterContext,
  type RunContext,
} from '@drmas/core';
import { ProgressReporter, type ProgressStream } from '../progress/ProgressReporter.js';
import { formatSummaryTable, summarizeMetrics } from '../progress/summaryTable.js';
import { renderReport } from '../report/renderReport.js';
import { reportSection } from './reportConfig.js';

const reportSchema = { report: reportSection };
type ReportConfig = PluginConfig<typeof reportSchema>;

export const PLUGIN_NAME = 'report';

export interface ReportPluginOptions {
  /** Where progress and the summary go; default `process.stderr`. */
  stream?: ProgressStream;
  /** Milliseconds clock for progress timing. */
  now?: () => number;
}

/**
 * Progress while training (`afterStep`), then at `shutdown` the run's `report.html` and a summary table.
 * Settings: `report.html`, `report.progress`.
 */
export class ReportPlugin implements Plugin<ReportPluginOptions, typeof reportSchema> {
  readonly name = PLUGIN_NAME;
  readonly configSchema = reportSchema;
  private run: RunContext | undefined;
  private progress: ProgressReporter | undefined;
  /**
   * The kernel's own metrics objects, kept by reference: `evaluate` and the step timer add to a step's metrics after
   * `afterStep`, so at shutdown they hold what metrics.jsonl holds.
   */
  private steps: Array<{ step: number; metrics: Metrics }> = [];

  constructor(readonly options: ReportPluginOptions = {}) {}

  register(ctx: RegisterContext<ReportConfig>): void {
    ctx.bind(RunFile).toConstantValue({ path: 'report.html', kind: 'artifact' });
  }

  apply(kernel: ApplyContext<ReportConfig>): void {
    const settings = () => kernel.config.report;
    const stream = () => this.options.stream ?? process.stderr;

    kernel.hooks.setup.tap({ name: PLUGIN_NAME, stage: Stage.LAST }, (run) => {
      this.run = run;
      this.steps = [];
      const mode = settings().progress;
      this.progress =
        mode === 'off'
          ? undefined
          : new ProgressReporter({
              total: kernel.config.trainer.steps,
              mode,
              stream: stream(),
              ...(this.options.now ? { now: this.options.now } : {}),
            });
      const progress = this.progress;
      if (progress?.mode === 'bar') {
        // Other plugins log through run.log; clear the bar first so their message does not land in the middle of it.
        const log = run.log.bind(run);
        run.log = (message: string) => {
          progress.clear();
          log(message);
        };
      }
      progress?.start();
    });

    kernel.hooks.afterStep.tap({ name: PLUGIN_NAME, stage: Stage.REPORT }, (result) => {
      this.steps.push({ step: result.step, metrics: result.metrics });
      this.progress?.update(result.step, result.metrics);
    });

    kernel.hooks.shutdown.tapPromise({ name: PLUGIN_NAME, stage: Stage.REPORT }, async () => {
      const run = this.run;
      const elapsedMs = this.progress?.elapsedMs;
      this.progress?.finish();
      if (!run) return;
      if (settings().html && existsSync(run.runDir)) {
        try {
          const { file, notes } = renderReport({ runDir: run.runDir });
          run.log(`report ${file}${notes.length ? ` (${notes.length} note${notes.length > 1 ? 's' : ''} in it)` : ''}`);
        } catch (error) {
          run.log(`warning: report.html was not written: ${(error as Error).message}`);
        }
      }
      if (this.steps.length) {
        const records = this.steps.map(({ step, metrics }) => ({ ...metrics, step }));
        const stats = summarizeMetrics(records, elapsedMs !== undefined ? elapsedMs / 1000 : undefined);
        stream().write(`${formatSummaryTable(stats)}\n`);
      }
    });
  }
}

/** The plugin module's default export: `plugins: ['report']`. */
export default function reportPlugin(options: ReportPluginOptions = {}): ReportPlugin {
  return new ReportPlugin(options);
}
