import { seriesPoints, type Series } from './reportData.js';
import type { ChartLine, LineChartOptions, Point } from './svgLineChart.js';

export interface PlannedChart {
  /** Stable id: `data-plot` of the chart in the page. */
  id: string;
  title: string;
  section: 'Reward' | 'Validation' | 'Optimization' | 'Rollouts' | 'Performance';
  /** The metric keys the chart draws. */
  keys: string[];
  chart: Omit<LineChartOptions, 'yScale' | 'width' | 'height' | 'id'>;
  /** Offer a log-scale view; `logByDefault` when the values span two decades or more. */
  logToggle: boolean;
  logByDefault: boolean;
}

const GRAD_NORM = /^(actor|critic)\/(?:(.+)\/)?grad_norm$/;
const LOSS = /^(actor|critic)\/(?:(.+)\/)?([a-z0-9_]*loss)$/;
const KL = /(^|\/)(kl|ppo_kl|kl_div|kl_penalty|approx_kl)$/;
const ENTROPY = /(^|\/)entropy$/;
const RESPONSE_LENGTH = /(^|\/)response_length(\/|$)|(^|\/)response\/length(\/|$)/;
const VALIDITY = /valid/;
const THROUGHPUT = /tokens?_per_s(ec(ond)?)?$|tokens?\/s$|throughput/;
const TOKEN_COUNT = /(^|\/)(total_)?(num_)?tokens(\/sum|_total)?$/;
const VAL_OVERALL = /^val\/[^/]+$/;
const VAL_BY_SOURCE = /^val\/(.+)\/([^/]+)$/;

function finiteCount(series: Series | undefined): number {
  return seriesPoints(series).filter(([, y]) => Number.isFinite(y)).length;
}

/** `actor/solver/grad_norm` -> `solver`; without a group, the section name (`actor`). */
function groupOf(match: RegExpMatchArray): string {
  return match[2] ?? match[1]!;
}

function spansDecades(lines: ChartLine[]): boolean {
  const ys = lines.flatMap((l) => l.points.map(([, y]) => y)).filter((y) => Number.isFinite(y) && y > 0);
  if (ys.length < 2) return false;
  return ys.reduce((a, b) => Math.max(a, b)) / ys.reduce((a, b) => Math.min(a, b)) >= 100;
}

function line(series: Record<string, Series>, key: string, label = key): ChartLine {
  return { label, points: seriesPoints(series[key]) };
}

/** Groups of keys by a label, in first-seen order. */
function groupBy<T>(items: T[], keyOf: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = keyOf(item);
    out.set(k, [...(out.get(k) ?? []), item]);
  }
  return out;
}

/**
 * Decides which charts a report has from the metric names present. Each key is drawn at most once; a chart whose
 * series have no finite value is left out. Metrics no chart claims still appear in the table of last values.
 */
export function planCharts(series: Record<string, Series>): PlannedChart[] {
  const keys = Object.keys(series)
    .filter((k) => finiteCount(series[k]) > 0)
    .sort();
  const claimed = new Set<string>();
  const take = (predicate: (key: string) => boolean) => {
    const found = keys.filter((k) => !claimed.has(k) && predicate(k));
    found.forEach((k) => claimed.add(k));
    return found;
  };
  const charts: PlannedChart[] = [];
  const add = (chart: Omit<PlannedChart, 'logToggle' | 'logByDefault'> & { logToggle?: boolean }) => {
    if (chart.chart.lines.length === 0 && !chart.chart.overlay?.length) return;
    const logToggle = chart.logToggle ?? false;
    charts.push({ ...chart, logToggle, logByDefault: logToggle && spansDecades(chart.chart.lines) });
  };

  // Outcome (the episodes' score) and reward (the turn rewards trained on): mean with a ±std band; min/max dashed.
  for (const prefix of ['outcome', 'reward']) {
    const stats = take((k) => new RegExp(`^${prefix}/(mean|std|min|max)$`).test(k));
    const meanKey = `${prefix}/mean`;
    if (!stats.includes(meanKey)) {
      stats.forEach((k) => claimed.delete(k));
      continue;
    }
    const mean = seriesPoints(series[meanKey]);
    const std = new Map(seriesPoints(series[`${prefix}/std`]));
    const band = std.size
      ? {
          label: 'mean ± std',
          points: mean.filter(([x]) => std.has(x)).map(([x, m]): [number, number, number] => [x, m - std.get(x)!, m + std.get(x)!]),
        }
      : undefined;
    add({
      id: prefix,
      title: prefix === 'outcome' ? 'Outcome' : 'Reward',
      section: 'Reward',
      keys: stats,
      chart: {
        title: `${prefix} per step`,
        xLabel: 'step',
        band,
        lines: [
          line(series, meanKey),
          ...[`${prefix}/min`, `${prefix}/max`].filter((k) => stats.includes(k)).map((k) => ({ ...line(series, k), dashed: true })),
        ],
      },
    });
  }
  const otherReward = take((k) => /^(reward|outcome)\//.test(k) || /^(episode|env)\/(reward|success|outcome|score)/.test(k));
  add({
    id: 'reward-other',
    title: 'Other reward metrics',
    section: 'Reward',
    keys: otherReward,
    chart: { xLabel: 'step', lines: otherReward.map((k) => line(series, k)) },
  });

  // Validation: overall, then one chart per metric (avg@k, pass@k, ...) with a line per data source.
  const valOverall = take((k) => VAL_OVERALL.test(k));
  add({
    id: 'val',
    title: 'Validation',
    section: 'Validation',
    keys: valOverall,
    chart: { xLabel: 'step', lines: valOverall.map((k) => line(series, k)) },
  });
  const valSource = take((k) => VAL_BY_SOURCE.test(k));
  for (const [metric, ks] of groupBy(valSource, (k) => k.match(VAL_BY_SOURCE)![2]!)) {
    add({
      id: `val-by-source-${metric}`,
      title: `Validation ${metric} by data source`,
      section: 'Validation',
      keys: ks,
      chart: { xLabel: 'step', lines: ks.map((k) => line(series, k, k.match(VAL_BY_SOURCE)![1])) },
    });
  }

  // Optimization: gradient norms and losses per worker group, KL and entropy.
  const grads = take((k) => GRAD_NORM.test(k));
  add({
    id: 'grad_norm',
    title: 'Gradient norm per worker group',
    section: 'Optimization',
    keys: grads,
    logToggle: true,
    chart: { xLabel: 'step', lines: grads.map((k) => line(series, k, groupOf(k.match(GRAD_NORM)!))) },
  });
  const losses = take((k) => LOSS.test(k));
  for (const [kind, ks] of groupBy(losses, (k) => k.match(LOSS)![3]!)) {
    add({
      id: `loss-${kind}`,
      title: `${kind} per worker group`,
      section: 'Optimization',
      keys: ks,
      chart: { xLabel: 'step', lines: ks.map((k) => line(series, k, groupOf(k.match(LOSS)!))) },
    });
  }
  const kl = take((k) => KL.test(k));
  add({
    id: 'kl',
    title: 'KL divergence',
    section: 'Optimization',
    keys: kl,
    logToggle: true,
    chart: { xLabel: 'step', lines: kl.map((k) => line(series, k)) },
  });
  const entropy = take((k) => ENTROPY.test(k));
  add({
    id: 'entropy',
    title: 'Entropy',
    section: 'Optimization',
    keys: entropy,
    chart: { xLabel: 'step', lines: entropy.map((k) => line(series, k)) },
  });

  // Rollouts.
  const lengths = take((k) => RESPONSE_LENGTH.test(k));
  add({
    id: 'response_length',
    title: 'Response length (tokens)',
    section: 'Rollouts',
    keys: lengths,
    chart: { xLabel: 'step', lines: lengths.map((k) => line(series, k)) },
  });
  const validity = take((k) => VALIDITY.test(k));
  add({
    id: 'validity',
    title: 'Validity',
    section: 'Rollouts',
    keys: validity,
    chart: { xLabel: 'step', lines: validity.map((k) => line(series, k)) },
  });

  // Performance: seconds per hook stacked, the whole step as an outline; tokens per second.
  const hooks = take((k) => k.startsWith('timing/') && k !== 'timing/step');
  const stepTime = take((k) => k === 'timing/step');
  if (hooks.length || stepTime.length) {
    add({
      id: 'timing',
      title: 'Wall time per hook (s)',
      section: 'Performance',
      keys: [...hooks, ...stepTime],
      chart: {
        xLabel: 'step',
        yLabel: 'seconds',
        stacked: hooks.length > 0,
        lines: hooks.map((k) => line(series, k, k.slice('timing/'.length))),
        overlay: stepTime.map((k) => ({ ...line(series, k, 'step (total)'), color: '#222', dashed: true })),
      },
    });
  }
  const throughput = take((k) => THROUGHPUT.test(k));
  const throughputLines = throughput.map((k) => line(series, k));
  if (throughput.length === 0 && series['timing/step']) {
    // No throughput metric: derive one from a token count and the step time.
    const tokensKey = keys.find((k) => TOKEN_COUNT.test(k));
    if (tokensKey) {
      const seconds = new Map(seriesPoints(series['timing/step']));
      const points: Point[] = seriesPoints(series[tokensKey])
        .filter(([x]) => (seconds.get(x) ?? 0) > 0)
        .map(([x, tokens]) => [x, tokens / seconds.get(x)!]);
      if (points.some(([, y]) => Number.isFinite(y))) throughputLines.push({ label: `${tokensKey} / timing/step`, points });
    }
  }
  if (throughputLines.length) {
    add({
      id: 'throughput',
      title: 'Tokens per second',
      section: 'Performance',
      keys: throughput,
      chart: { xLabel: 'step', lines: throughputLines },
    });
  }

  return charts;
}
