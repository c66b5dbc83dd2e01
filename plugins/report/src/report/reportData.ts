import type { JsonRecord } from './parseJsonLines.js';
import type { RunFiles } from './readRunDir.js';

/** A metric value as JSON can hold it: non-finite numbers as strings; `null` where the writer had already lost it. */
export type SeriesValue = number | null | 'NaN' | 'Infinity' | '-Infinity';

/** One metric over steps, ordered by step; steps where the metric was not recorded are absent. */
export interface Series {
  steps: number[];
  values: SeriesValue[];
}

export interface RunSummary {
  presets: string[];
  plugins: string[];
  advantage: string | null;
  /** Model id -> what it runs (`model`, and `backend` when set). */
  models: Record<string, string>;
  /** Agent role -> model id. */
  agents: Record<string, string>;
  /** `trainer.steps` of the config. */
  stepsPlanned: number | null;
  /** Steps with a metrics line. */
  stepsRecorded: number;
  lastStep: number | null;
  seed: number | null;
  /** Sum of `timing/step`, in seconds. */
  totalSeconds: number | null;
}

/** Everything a report shows; embedded in report.html as `#drmas-report-data`. */
export interface ReportData {
  format: 'drmas-report/1';
  runDir: string;
  generatedAt: string;
  summary: RunSummary;
  config: JsonRecord | null;
  series: Record<string, Series>;
  /** The last recorded value of every metric. */
  lastMetrics: Record<string, SeriesValue>;
  evaluations: JsonRecord[];
  samples: JsonRecord[];
  notes: string[];
}

export function encodeValue(value: unknown): SeriesValue | undefined {
  if (value === null) return null;
  if (typeof value !== 'number') return undefined;
  if (Number.isFinite(value)) return value;
  if (Number.isNaN(value)) return 'NaN';
  return value > 0 ? 'Infinity' : '-Infinity';
}

/** The number a series value stands for; `null` reads as NaN. */
export function decodeValue(value: SeriesValue): number {
  return value === null ? Number.NaN : Number(value);
}

/** The finite numbers of a series as `[step, value]`, non-finite values kept as NaN (gaps in a plot). */
export function seriesPoints(series: Series | undefined): Array<[number, number]> {
  if (!series) return [];
  return series.steps.map((step, i) => [step, decodeValue(series.values[i]!)]);
}

class SeriesBuilder {
  private readonly byKey = new Map<string, Map<number, SeriesValue>>();

  has(key: string, step: number): boolean {
    return this.byKey.get(key)?.has(step) ?? false;
  }

  set(key: string, step: number, value: SeriesValue): void {
    let points = this.byKey.get(key);
    if (!points) this.byKey.set(key, (points = new Map<number, SeriesValue>()));
    points.set(step, value);
  }

  build(): Record<string, Series> {
    const out: Record<string, Series> = {};
    for (const key of [...this.byKey.keys()].sort()) {
      const entries = [...this.byKey.get(key)!.entries()].sort((a, b) => a[0] - b[0]);
      out[key] = { steps: entries.map(([s]) => s), values: entries.map(([, v]) => v) };
    }
    return out;
  }
}

/** The step of each metrics line; a line without one follows the line before it. */
export function stepsOf(metrics: JsonRecord[]): number[] {
  let previous = 0;
  return metrics.map((record) => {
    previous = typeof record.step === 'number' && Number.isFinite(record.step) ? record.step : previous + 1;
    return previous;
  });
}

/** Builds the metric series: metrics.jsonl first (a later line for the same step wins), then eval.jsonl where it adds. */
export function buildSeries(metrics: JsonRecord[], evaluations: JsonRecord[], notes: string[] = []): Record<string, Series> {
  const builder = new SeriesBuilder();
  const seen = new Set<number>();
  let repeated = 0;
  const steps = stepsOf(metrics);
  metrics.forEach((record, index) => {
    const step = steps[index]!;
    if (seen.has(step)) repeated++;
    seen.add(step);
    for (const [key, raw] of Object.entries(record)) {
      if (key === 'step') continue;
      const value = encodeValue(raw);
      if (value !== undefined) builder.set(key, step, value);
    }
  });
  if (repeated) notes.push(`metrics.jsonl: ${repeated} step(s) appear more than once (a resumed run?); the last line of each is used`);
  for (const record of evaluations) {
    if (typeof record.step !== 'number') continue;
    for (const [key, raw] of Object.entries(record)) {
      if (key === 'step') continue;
      const value = encodeValue(raw);
      if (value !== undefined && !builder.has(key, record.step)) builder.set(key, record.step, value);
    }
  }
  return builder.build();
}

function specName(spec: unknown): string {
  if (typeof spec === 'string') return spec;
  if (Array.isArray(spec) && typeof spec[0] === 'string') return spec[0];
  if (typeof spec === 'object' && spec !== null && typeof (spec as { name?: unknown }).name === 'string')
    return (spec as { name: string }).name;
  return JSON.stringify(spec);
}

function section(config: JsonRecord | undefined, name: string): JsonRecord {
  const value = config?.[name];
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonRecord) : {};
}

function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

export function summarizeRun(config: JsonRecord | undefined, series: Record<string, Series>, stepsRecorded: number): RunSummary {
  const models: Record<string, string> = {};
  for (const [id, entry] of Object.entries(section(config, 'models'))) {
    const m = typeof entry === 'object' && entry !== null ? (entry as JsonRecord) : {};
    const what = typeof m.model === 'string' ? m.model : '?';
    models[id] = typeof m.backend === 'string' ? `${what} (${m.backend})` : what;
  }
  const agents: Record<string, string> = {};
  for (const [role, entry] of Object.entries(section(config, 'agents'))) {
    const a = typeof entry === 'object' && entry !== null ? (entry as JsonRecord) : {};
    agents[role] = typeof a.model === 'string' ? a.model : role;
  }
  const trainer = section(config, 'trainer');
  const algorithm = section(config, 'algorithm');
  const stepTimes = seriesNumbers(series['timing/step']).filter(Number.isFinite);
  return {
    presets: Array.isArray(config?.presets) ? config.presets.map(specName) : [],
    plugins: Array.isArray(config?.plugins) ? config.plugins.map(specName) : [],
    advantage: typeof algorithm.advantage === 'string' ? algorithm.advantage : null,
    models,
    agents,
    stepsPlanned: numberOrNull(trainer.steps),
    stepsRecorded,
    lastStep: Object.values(series).reduce<number | null>(
      (last, s) => (s.steps.length ? Math.max(last ?? -Infinity, s.steps[s.steps.length - 1]!) : last),
      null,
    ),
    seed: numberOrNull(trainer.seed),
    totalSeconds: stepTimes.length ? stepTimes.reduce((a, b) => a + b, 0) : null,
  };
}

function seriesNumbers(series: Series | undefined): number[] {
  return series ? series.values.map(decodeValue) : [];
}

const MAX_SAMPLE_TEXT = 4000;
const MAX_SAMPLE_ARRAY = 16;

/** A rollout row made small enough to embed: long strings cut, long number arrays (token ids) summarized. */
export function compactSample(value: unknown, depth = 0): unknown {
  if (typeof value === 'string')
    return value.length > MAX_SAMPLE_TEXT ? `${value.slice(0, MAX_SAMPLE_TEXT)}… (${value.length} characters)` : value;
  if (typeof value === 'number') return encodeValue(value);
  if (Array.isArray(value)) {
    if (value.length > MAX_SAMPLE_ARRAY && value.every((v) => typeof v === 'number')) return `[${value.length} numbers]`;
    if (depth > 6) return `[${value.length} items]`;
    return value.slice(0, 64).map((v) => compactSample(v, depth + 1));
  }
  if (typeof value === 'object' && value !== null) {
    if (depth > 6) return '{…}';
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, compactSample(v, depth + 1)]));
  }
  return value;
}

/** A few rows of the latest step in rollouts.jsonl. */
export function pickSamples(rollouts: JsonRecord[], count = 4): JsonRecord[] {
  const steps = rollouts.map((r) => (typeof r.step === 'number' ? r.step : Number.NEGATIVE_INFINITY));
  const latest = steps.reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY);
  const rows = Number.isFinite(latest) ? rollouts.filter((_, i) => steps[i] === latest) : rollouts.slice(-count);
  return rows.slice(0, count).map((r) => compactSample(r) as JsonRecord);
}

export function buildReportData(files: RunFiles, generatedAt = new Date()): ReportData {
  const notes = [...files.notes];
  const series = buildSeries(files.metrics, files.evaluations, notes);
  const lastMetrics: Record<string, SeriesValue> = {};
  // Every series has at least one point: SeriesBuilder makes a key only when it sets a value.
  for (const [key, s] of Object.entries(series)) lastMetrics[key] = s.values[s.values.length - 1]!;
  return {
    format: 'drmas-report/1',
    runDir: files.runDir,
    generatedAt: generatedAt.toISOString(),
    summary: summarizeRun(files.config, series, new Set(stepsOf(files.metrics)).size),
    config: files.config ?? null,
    series,
    lastMetrics,
    evaluations: files.evaluations.map((r) => compactSample(r) as JsonRecord),
    samples: pickSamples(files.rollouts),
    notes,
  };
}
