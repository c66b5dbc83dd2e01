import path from 'node:path';
import {
  MetricsSink,
  rowTrains,
  RunFile,
  Stage,
  type ApplyContext,
  type PluginConfig,
  type Plugin,
  type RegisterContext,
  type TrainingBatch,
} from '@drmas/core';
import { EventFileWriter } from '../events/EventFileWriter.js';
import type { SummaryValue } from '../events/eventSchema.js';
import { histogramValue, scalarValue, textValue } from '../events/summaries.js';
import { rolloutMarkdown } from './rolloutText.js';
import { tensorboardSection } from './tensorboardConfig.js';

const tensorboardSchema = { tensorboard: tensorboardSection };
type TensorboardConfig = PluginConfig<typeof tensorboardSchema>;

export const PLUGIN_NAME = 'tensorboard';

/**
 * Added to a histogram's tag when a metric of the step has that name (`actor/<group>/grad_norm` is both the step's mean
 * and the distribution of its optimizer steps): TensorBoard keys a series by tag alone, and a tag written as a scalar
 * and a histogram shows neither in its default (Rust) reader.
 */
export const HISTOGRAM_SUFFIX = '/histogram';

/** Per agent: the advantages of its trained tokens (rows kept out of the loss have none) and the rewards of its turns. */
function batchDistributions(batch: TrainingBatch): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  const { codes, names } = batch.ids.agent;
  for (let row = 0; row < batch.rows; row++) {
    const agent = names[codes[row]!]!;
    (out[`rewards/${agent}`] ??= []).push(batch.rewards[row]!);
    const advantages = (out[`advantages/${agent}`] ??= []);
    const offset = row * batch.responseLength;
    if (!rowTrains(batch, row)) continue;
    for (let t = 0; t < batch.responseLengths[row]!; t++) {
      if (batch.responseMask[offset + t]! > 0) advantages.push(batch.advantages[offset + t]!);
    }
  }
  return out;
}

/**
 * Writes the run's TensorBoard event files: every metric line as scalars (through the MetricsSink role, so
 * evaluation metrics come too), and per step histograms and rollout samples as text. The first event of each process
 * at a step is a session start, so a resumed run's steps replace those an interrupted process wrote after its
 * checkpoint.
 */
export class TensorBoardPlugin implements Plugin<unknown, typeof tensorboardSchema> {
  readonly name = PLUGIN_NAME;
  readonly configSchema = tensorboardSchema;
  private writer: EventFileWriter | undefined;
  private started = false;
  /** Histogram tags that met a metric of the same name: they keep the suffix for the rest of the run. */
  private readonly suffixed = new Set<string>();

  register(ctx: RegisterContext<TensorboardConfig>): void {
    // The folder is read when the kernel asks for the run's files, after `configure` (a getter, not a copy).
    ctx.bind(RunFile).toConstantValue({
      kind: 'artifact',
      get path() {
        return ctx.config.tensorboard.logDir;
      },
    });
    ctx.bind(MetricsSink).toConstantValue({
      write: ({ step, metrics }) => {
        this.startAt(step);
        this.writer?.summary(
          step,
          Object.entries(metrics).map(([tag, value]) => scalarValue(tag, value)),
        );
      },
    });
  }

  apply(kernel: ApplyContext<TensorboardConfig>): void {
    const settings = () => kernel.config.tensorboard;

    kernel.hooks.setup.tap({ name: PLUGIN_NAME, stage: Stage.REPORT }, (run) => {
      this.writer = new EventFileWriter(path.resolve(run.runDir, settings().logDir));
      this.started = false;
      this.suffixed.clear();
      run.log(`tensorboard: ${path.relative(process.cwd(), this.writer.file) || this.writer.file}`);
    });

    kernel.hooks.afterStep.tap({ name: PLUGIN_NAME, stage: Stage.REPORT }, ({ step, batch, metrics, context }) => {
      if (!this.writer) return;
      this.startAt(step);
      const { histograms, bins, textSamples, textChars } = settings();
      const values: SummaryValue[] = [];
      if (histograms) {
        const distributions = { ...batchDistributions(batch), ...context.distributions };
        for (const [name, list] of Object.entries(distributions)) {
          if (name in metrics) this.suffixed.add(name);
          const value = histogramValue(this.suffixed.has(name) ? `${name}${HISTOGRAM_SUFFIX}` : name, list, bins);
          if (value) values.push(value);
        }
      }
      if (textSamples > 0 && batch.trajectories.length) values.push(textValue('rollouts', rolloutMarkdown(batch, textSamples, textChars)));
      this.writer.summary(step, values);
    });

    kernel.hooks.shutdown.tap({ name: PLUGIN_NAME, stage: Stage.LAST }, () => {
      this.writer?.close();
      this.writer = undefined;
    });
  }

  private startAt(step: number): void {
    if (this.started || !this.writer) return;
    this.started = true;
    this.writer.sessionStart(step);
  }
}

/** The plugin module's default export: `plugins: ['tensorboard']`. */
export default function tensorboardPlugin(): TensorBoardPlugin {
  return new TensorBoardPlugin();
}
