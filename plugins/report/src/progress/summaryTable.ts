import { formatDuration } from './formatProgress.js';

/** One step's metrics: a metrics.jsonl line or the object the kernel filled. Non-numbers are ignored. */
export type MetricRecord = Readonly<Record<string, unknown>>;

export interface WorkerGroupSummary {
  group: string;
  gradNormFinal?: number;
  gradNormMean?: number;
  /** The loss metric summarized: `loss`, else `pg_loss`, else the first `*loss`. */
  lossKey?: string;
  lossFinal?: number;
  lossMean?: number;
}

export interface MetricTrend {
  first: number;
  last: number;
  best: number;
  bestStep: number;
}

export interface RunSummaryStats {
  steps: number;
  groups: WorkerGroupSummary[];
  /** `outcome/mean` (the episodes' outcome) and `reward/mean` (the turn rewards trained on) over the run. */
  outcome?: MetricTrend;
  reward?: MetricTrend;
  /** Last value of every `val/*` metric but the per-agent ones (`val/agent/...`). */
  validation: Array<[key: string, value: number]>;
  totalSeconds?: number;
  stepsPerSecond?: number;
}

const GROUP_METRIC = /^actor\/(?:(.+)\/)?(grad_norm|[a-z0-9_]*loss)$/;

function numbers(records: readonly MetricRecord[], key: string): Array<[step: number, value: number]> {
  const out: Array<[number, number]> = [];
  records.forEach((r, i) => {
    const v = r[key];
    if (typeof v === 'number' && Number.isFinite(v)) out.push([typeof r.step === 'number' ? r.step : i + 1, v]);
  });
  return out;
}

function trend(points: Array<[number, number]>): MetricTrend | undefined {
  if (!points.length) return undefined;
  const best = points.reduce((a, b) => (b[1] > a[1] ? b : a));
  return { first: points[0]![1], last: points[points.length - 1]![1], best: best[1], bestStep: best[0] };
}

function meanOf(points: Array<[number, number]>): number | undefined {
  return points.length ? points.reduce((a, [, v]) => a + v, 0) / points.length : undefined;
}

/**
 * Summarizes a run's metrics: per worker group (`actor/<group>/grad_norm`, `actor/<group>/loss`) final and mean
 * values, the outcome's and the reward's first/last/best, the final validation metrics and the speed. `totalSeconds` defaults to the
 * sum of `timing/step`.
 */
export function summarizeMetrics(records: readonly MetricRecord[], totalSeconds?: number): RunSummaryStats {
  const keys = new Set(records.flatMap((r) => Object.keys(r)));
  // group -> metric name -> full key; `actor/grad_norm` (no group) counts as the group `actor`.
  const byGroup = new Map<string, Map<string, string>>();
  for (const key of [...keys].sort()) {
    const match = key.match(GROUP_METRIC);
    if (!match) continue;
    const group = match[1] ?? 'actor';
    if (!byGroup.has(group)) byGroup.set(group, new Map());
    byGroup.get(group)!.set(match[2]!, key);
  }
  const groups: WorkerGroupSummary[] = [...byGroup.entries()].map(([group, metrics]) => {
    const summary: WorkerGroupSummary = { group };
    const grad = metrics.has('grad_norm') ? numbers(records, metrics.get('grad_norm')!) : [];
    if (grad.length) {
      summary.gradNormFinal = grad[grad.length - 1]![1];
      summary.gradNormMean = meanOf(grad);
    }
    const names = [...metrics.keys()];
    const lossName = ['loss', 'pg_loss'].find((m) => metrics.has(m)) ?? names.find((m) => m.endsWith('loss'));
    if (lossName) {
      const loss = numbers(records, metrics.get(lossName)!);
      if (loss.length) {
        summary.lossKey = lossName;
        summary.lossFinal = loss[loss.length - 1]![1];
        summary.lossMean = meanOf(loss);
      }
    }
    return summary;
  });

  const validation: Array<[string, number]> = [...keys]
    .filter((k) => k.startsWith('val/') && !k.startsWith('val/agent/'))
    .sort()
    .flatMap((k) => {
      const points = numbers(records, k);
      return points.length ? [[k, points[points.length - 1]![1]] as [string, number]] : [];
    });
  const steps = new Set(records.map((r, i) => (typeof r.step === 'number' ? r.step : i + 1))).size;
  const stepTimes = numbers(records, 'timing/step');
  const seconds = totalSeconds ?? (stepTimes.length ? stepTimes.reduce((a, [, v]) => a + v, 0) : undefined);
  return {
    steps,
    groups,
    outcome: trend(numbers(records, 'outcome/mean')),
    reward: trend(numbers(records, 'reward/mean')),
    validation,
    totalSeconds: seconds,
    stepsPerSecond: seconds && seconds > 0 ? steps / seconds : undefined,
  };
}

/** 4 significant digits, exponent form outside [1e-3, 1e5). */
export function formatMetric(value: number | undefined): string {
  if (value === undefined) return '-';
  if (!Number.isFinite(value)) return String(value);
  if (value === 0) return '0';
  const abs = Math.abs(value);
  if (abs >= 1e5 || abs < 1e-3) return value.toExponential(2);
  return String(Number(value.toPrecision(4)));
}

/** A plain-text table; by default the first column is left-aligned and the others right-aligned. */
export function formatTable(headers: string[], rows: string[][], align?: Array<'left' | 'right'>, indent = '  '): string {
  const widths = headers.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const alignOf = (c: number) => align?.[c] ?? (c === 0 ? 'left' : 'right');
  const render = (cells: string[]) =>
    indent +
    cells
      .map((cell, c) => (alignOf(c) === 'left' ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0)))
      .join('  ')
      .trimEnd();
  return [render(headers), indent + widths.map((w) => '─'.repeat(w)).join('  '), ...rows.map(render)].join('\n');
}

/** The end-of-run summary as text lines (no trailing newline). */
export function formatSummaryTable(stats: RunSummaryStats): string {
  const out: string[] = ['run summary'];
  if (stats.groups.length) {
    out.push(
      formatTable(
        ['worker group', 'grad norm final', 'grad norm mean', 'loss', 'loss final', 'loss mean'],
        stats.groups.map((g) => [
          g.group,
          formatMetric(g.gradNormFinal),
          formatMetric(g.gradNormMean),
          g.lossKey ?? '-',
          formatMetric(g.lossFinal),
          formatMetric(g.lossMean),
        ]),
        ['left', 'right', 'right', 'left', 'right', 'right'],
      ),
    );
    out.push('');
  }
  const overall: Array<[string, string]> = [];
  for (const [key, r] of [['outcome/mean', stats.outcome] as const, ['reward/mean', stats.reward] as const]) {
    if (r)
      overall.push([
        key,
        `first ${formatMetric(r.first)} · last ${formatMetric(r.last)} · best ${formatMetric(r.best)} (step ${r.bestStep})`,
      ]);
  }
  for (const [key, value] of stats.validation) overall.push([key, formatMetric(value)]);
  const time = stats.totalSeconds !== undefined ? formatDuration(stats.totalSeconds * 1000) : '-';
  const speed = stats.stepsPerSecond !== undefined ? `${formatMetric(stats.stepsPerSecond)} steps/s` : '-';
  overall.push(['steps', String(stats.steps)], ['total time', time], ['speed', speed]);
  const width = Math.max(...overall.map(([k]) => k.length));
  out.push(...overall.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`));
  return out.join('\n');
}
