import { planPanels, type PlannedPanel } from './chartPlan.js';
import type { JsonRecord } from './parseJsonLines.js';
import { ROLLOUT_TAIL_BYTES, type RunFiles } from './readRunDir.js';

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

/** One agent turn in the rollout browser: a `rollouts.jsonl` row, its text cut to `MAX_TURN_TEXT` characters. */
export interface EpisodeTurn {
  agent: string;
  index: number | null;
  envStep: number | null;
  prompt: string;
  response: string;
  /** The parsed action as compact JSON (`{"tag":"boxed","content":"124"}`); `''` when the row has none. */
  action: string;
  valid: boolean | null;
  invalidReason: string | null;
  finishReason: string | null;
  reward: SeriesValue;
  advantage: SeriesValue;
  responseTokens: number | null;
}

/** The turns of one trajectory at one step, in the order they were logged. */
export interface Episode {
  step: number | null;
  id: string;
  taskId: string | null;
  dataSource: string | null;
  outcome: SeriesValue;
  turns: EpisodeTurn[];
}

export interface RolloutBrowserData {
  episodes: Episode[];
  /** What part of `rollouts.jsonl` the episodes are, in words, for the page. */
  bound: string;
}

/** Everything a report shows; embedded in report.html as `#drmas-report-data`. */
export interface ReportData {
  format: 'drmas-report/2';
  runDir: string;
  generatedAt: string;
  summary: RunSummary;
  config: JsonRecord | null;
  series: Record<string, Series>;
  /** The charts, grouped in panels, that the page draws from `series`. */
  panels: PlannedPanel[];
  /** The last recorded value of every metric. */
  lastMetrics: Record<string, SeriesValue>;
  evaluations: JsonRecord[];
  rollouts: RolloutBrowserData;
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

const MAX_TURN_TEXT = 4000;
/** Episodes kept for the rollout browser: the newest ones of the tail read. */
export const MAX_EPISODES = 500;

/** An evaluation record made small enough to embed: long strings cut, long arrays summarized. */
export function compactRecord(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return cutText(value);
  if (typeof value === 'number') return encodeValue(value);
  if (Array.isArray(value)) {
    if (value.length > 16 && value.every((v) => typeof v === 'number')) return `[${value.length} numbers]`;
    if (depth > 6) return `[${value.length} items]`;
    return value.slice(0, 64).map((v) => compactRecord(v, depth + 1));
  }
  if (typeof value === 'object' && value !== null) {
    if (depth > 6) return '{…}';
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, compactRecord(v, depth + 1)]));
  }
  return value;
}

function cutText(text: string): string {
  return text.length > MAX_TURN_TEXT ? `${text.slice(0, MAX_TURN_TEXT)}… (${text.length} characters)` : text;
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const value = (v: unknown): SeriesValue => encodeValue(v) ?? null;

function turnOf(row: JsonRecord): EpisodeTurn {
  return {
    agent: str(row.agent) ?? str(row.agentId) ?? '?',
    index: num(row.index),
    envStep: num(row.envStep),
    prompt: cutText(str(row.prompt) ?? ''),
    response: cutText(str(row.response) ?? ''),
    action: row.action === undefined || row.action === null ? '' : cutText(JSON.stringify(row.action)),
    valid: typeof row.valid === 'boolean' ? row.valid : null,
    invalidReason: str(row.invalidReason),
    finishReason: str(row.finishReason),
    reward: value(row.reward),
    advantage: value(row.advantage),
    responseTokens: num(row.responseTokens),
  };
}

/** `rollouts.jsonl` rows (one per turn) as episodes: the turns of a trajectory at a step together, newest kept. */
export function episodesOf(rows: JsonRecord[], maxEpisodes = MAX_EPISODES): Episode[] {
  const byKey = new Map<string, Episode>();
  rows.forEach((row, i) => {
    const step = num(row.step);
    const id = str(row.trajectoryId) ?? `row-${i}`;
    const key = `${step}\u0000${id}`;
    let episode = byKey.get(key);
    if (!episode) {
      episode = { step, id, taskId: str(row.taskId), dataSource: str(row.dataSource), outcome: value(row.outcome), turns: [] };
      byKey.set(key, episode);
    }
    episode.turns.push(turnOf(row));
  });
  const episodes = [...byKey.values()];
  return episodes.slice(Math.max(0, episodes.length - maxEpisodes));
}

function mib(bytes: number): string {
  return `${(bytes / (1 << 20)).toFixed(bytes < 1 << 20 ? 2 : 1)} MiB`;
}

function rolloutBrowserData(files: RunFiles): RolloutBrowserData {
  const all = episodesOf(files.rollouts, Number.POSITIVE_INFINITY);
  const episodes = all.slice(Math.max(0, all.length - MAX_EPISODES));
  const file = files.rolloutsFile;
  if (!file) return { episodes, bound: 'no rollouts.jsonl in the run directory' };
  const steps = episodes.map((e) => e.step).filter((x): x is number => x !== null);
  const range = steps.length ? `steps ${Math.min(...steps)}-${Math.max(...steps)}` : 'no steps';
  const read = file.tailOnly ? `its last ${mib(ROLLOUT_TAIL_BYTES)} of ${mib(file.bytes)} read` : `all ${mib(file.bytes)} read`;
  const kept = all.length > episodes.length ? `; the newest ${MAX_EPISODES} of ${all.length} episodes kept` : '';
  return {
    episodes,
    bound: `${episodes.length} episodes (${range}) from rollouts.jsonl (${read}${kept}; texts cut at ${MAX_TURN_TEXT} characters)`,
  };
}

export function buildReportData(files: RunFiles, generatedAt = new Date()): ReportData {
  const notes = [...files.notes];
  const series = buildSeries(files.metrics, files.evaluations, notes);
  const lastMetrics: Record<string, SeriesValue> = {};
  // Every series has at least one point: SeriesBuilder makes a key only when it sets a value.
  for (const [key, s] of Object.entries(series)) lastMetrics[key] = s.values[s.values.length - 1]!;
  return {
    format: 'drmas-report/2',
    runDir: files.runDir,
    generatedAt: generatedAt.toISOString(),
    // Step 0 is the evaluation before training, not a training step.
    summary: summarizeRun(files.config, series, new Set(stepsOf(files.metrics).filter((step) => step > 0)).size),
    config: files.config ?? null,
    series,
    panels: planPanels(series),
    lastMetrics,
    evaluations: files.evaluations.map((r) => compactRecord(r) as JsonRecord),
    rollouts: rolloutBrowserData(files),
    notes,
  };
}
