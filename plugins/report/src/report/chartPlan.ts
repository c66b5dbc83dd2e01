import { seriesPoints, type Series } from './reportData.js';

/** One line of a chart: a metric key, its legend label, the y axis it is read on. */
export interface PlannedSeries {
  key: string;
  label: string;
  /** `left` is the chart's main axis; `right` holds what is on another scale (token counts, turns). */
  axis: 'left' | 'right';
  dashed?: boolean;
  /** Drawn only once its legend entry is clicked (spreads and copies that would crowd the chart). */
  hidden?: boolean;
}

export interface PlannedChart {
  /** Stable id: `data-chart` of the chart in the page. */
  id: string;
  title: string;
  leftLabel: string;
  rightLabel?: string;
  series: PlannedSeries[];
  /** `offer`: a log-scale switch; `default`: the switch starts on (the values span two decades or more). */
  log: 'none' | 'offer' | 'default';
  /** The values the left-axis quantity can take (a share's 0..1): its axis is not padded past them. */
  leftBounds?: [number, number];
}

export type PanelSection = 'Overview' | 'Agents' | 'Worker groups' | 'Timing and throughput' | 'Other metrics';

/** A titled group of charts: the overview, one agent, one worker group, ... */
export interface PlannedPanel {
  id: string;
  section: PanelSection;
  title: string;
  charts: PlannedChart[];
}

const AGENT = /^agent\/([^/]+)\/(.+)$/;
/** `trainer.agentDiagnostics`' metrics: Dr. MAS's mechanism per agent (`reward_mean`, always there, stays in the agent's panel). */
const MECHANISM =
  /^agent\/([^/]+)\/(grad_norm|grad_norm_max|reward_std|inflation_predicted|inflation_measured|inflation_advantages|constant_share)$/;
/** Worker-group metrics: the trainer's `actor/<group>/...` (and a critic's), the rollout engine's `rollout/<group>/probs_diff_*`. */
const GROUP = /^(actor|critic)\/([^/]+)\/(.+)$|^rollout\/([^/]+)\/(probs_diff_(?:mean|max))$/;
const VAL_OVERALL = /^val\/(avg|pass|maj|best|worst)@\d+$/;
/** `val/<source>/<metric>`; `val/agent/...` is per agent, not a data source. */
const VAL_BY_SOURCE = /^val\/(?!agent\/)([^/]+)\/([^/]+)$/;
const OUTCOME_BY_SOURCE = /^outcome\/(.+)\/mean$/;
const UNITS = { fraction: 'fraction', tokens: 'tokens / turns' };

function hasFinite(series: Series | undefined): boolean {
  return seriesPoints(series).some(([, y]) => Number.isFinite(y));
}

function spansDecades(series: Record<string, Series>, keys: string[]): boolean {
  const ys = keys.flatMap((k) => seriesPoints(series[k]).map(([, y]) => y)).filter((y) => Number.isFinite(y) && y > 0);
  if (ys.length < 2) return false;
  return ys.reduce((a, b) => Math.max(a, b)) / ys.reduce((a, b) => Math.min(a, b)) >= 100;
}

/** Keys in first-seen order, grouped by a label. */
function groupBy(items: string[], keyOf: (item: string) => string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const item of items) {
    const k = keyOf(item);
    out.set(k, [...(out.get(k) ?? []), item]);
  }
  return out;
}

/**
 * Decides the report's panels and charts from the metric names present. Each key is drawn at most once; keys with
 * no finite value, counts that would flatten a chart (`val/tasks`) and per-agent evaluation values (`val/agent/...`,
 * in the evaluation table) are not drawn; every key is still in the page's table of all metrics. Keys no rule claims land in "Other metrics", one chart per name prefix.
 */
export function planPanels(series: Record<string, Series>): PlannedPanel[] {
  const keys = Object.keys(series)
    .filter((k) => hasFinite(series[k]))
    .sort();
  const claimed = new Set<string>(['val/tasks']);
  const take = (predicate: (key: string) => boolean): string[] => {
    const found = keys.filter((k) => !claimed.has(k) && predicate(k));
    found.forEach((k) => claimed.add(k));
    return found;
  };
  const s = (key: string, axis: PlannedSeries['axis'] = 'left', extra: Partial<PlannedSeries> = {}): PlannedSeries => ({
    key,
    label: key,
    axis,
    ...extra,
  });
  const chart = (c: Omit<PlannedChart, 'log'> & { log?: boolean }): PlannedChart[] => {
    if (c.series.length === 0) return [];
    const left = c.series.filter((x) => x.axis === 'left').map((x) => x.key);
    const log = c.log ? (spansDecades(series, left) ? 'default' : 'offer') : 'none';
    return [{ ...c, rightLabel: c.series.some((x) => x.axis === 'right') ? c.rightLabel : undefined, log }];
  };
  const panels: PlannedPanel[] = [];
  const panel = (p: PlannedPanel) => {
    if (p.charts.length) panels.push(p);
  };

  // Per-agent evaluation values are a handful of points: the evaluation table shows them, first and last.
  take((k) => k.startsWith('val/agent/'));

  // Overview: what the run is for. Outcome and shaped reward; validation rates alone on their 0..1 axis.
  const outcome = take((k) => /^(outcome|reward)\/(mean|std|min|max)$/.test(k));
  const bySource = take((k) => OUTCOME_BY_SOURCE.test(k));
  const valOverall = take((k) => VAL_OVERALL.test(k));
  const valSource = take((k) => VAL_BY_SOURCE.test(k));
  const sources = new Set(valSource.map((k) => k.match(VAL_BY_SOURCE)![1]!));
  const episodes = take((k) => k.startsWith('episode/') || k === 'response/valid_fraction');
  const env = take((k) => k.startsWith('env/'));
  panel({
    id: 'overview',
    section: 'Overview',
    title: 'Overview',
    charts: [
      ...chart({
        id: 'outcome',
        title: 'Outcome (episodes) and reward (turns, after every reward tap)',
        leftLabel: 'mean per step',
        series: [
          ...['outcome/mean', 'reward/mean'].filter((k) => outcome.includes(k)).map((k) => s(k)),
          // one source: its line is the overall one again
          ...bySource.map((k) =>
            s(k, 'left', { label: `outcome ${k.match(OUTCOME_BY_SOURCE)![1]}`, dashed: true, hidden: bySource.length < 2 }),
          ),
          ...outcome.filter((k) => !k.endsWith('/mean')).map((k) => s(k, 'left', { dashed: true, hidden: true })),
        ],
      }),
      ...chart({
        id: 'validation',
        title: 'Validation',
        leftLabel: 'rate',
        series: [
          ...valOverall.map((k) => s(k)),
          ...valSource.map((k) => {
            const [, source, metric] = k.match(VAL_BY_SOURCE)!;
            return s(k, 'left', { label: `${metric} ${source}`, dashed: true, hidden: sources.size < 2 });
          }),
        ],
      }),
      ...chart({
        id: 'episodes',
        title: 'Episodes',
        leftLabel: UNITS.fraction,
        rightLabel: 'turns / episodes',
        series: episodes.map((k) => (/fraction$/.test(k) ? s(k) : s(k, 'right', k === 'episode/count' ? { hidden: true } : {}))),
      }),
      ...chart({ id: 'env', title: 'Environment (episode means)', leftLabel: 'mean', series: env.map((k) => s(k)) }),
    ],
  });

  // `trainer.agentDiagnostics`: the agents side by side, one chart per quantity.
  const mechanism = take((k) => MECHANISM.test(k));
  const mechanismChart = (id: string, title: string, leftLabel: string, names: string[], log = false, leftBounds?: [number, number]) =>
    chart({
      id: `mechanism-${id}`,
      title,
      leftLabel,
      log,
      leftBounds,
      series: mechanism
        .filter((k) => names.includes(k.match(MECHANISM)![2]!))
        .map((k) => {
          const [, agent, name] = k.match(MECHANISM)!;
          return s(k, 'left', { label: `${agent} ${name}`, dashed: name!.endsWith('_max') || name!.endsWith('_predicted') });
        }),
    });
  panel({
    id: 'mechanism',
    section: 'Agents',
    title: 'Per-agent gradients and rewards (trainer.agentDiagnostics)',
    charts: [
      ...mechanismChart(
        'grad-norm',
        "Each agent's share of the gradient: pre-clip norm (mean, max dashed)",
        'norm',
        ['grad_norm', 'grad_norm_max'],
        true,
      ),
      ...mechanismChart(
        'inflation',
        "A global baseline's gradient inflation: measured, predicted (dashed)",
        'ratio',
        ['inflation_measured', 'inflation_predicted'],
        true,
      ),
      ...mechanismChart(
        'inflation-advantages',
        "The inflation in the advantages alone: squared advantages, global over per-agent, summed over each agent's turns",
        'ratio',
        ['inflation_advantages'],
        true,
      ),
      ...mechanismChart('rewards', "Each agent's turn rewards: standard deviation within its prompt groups", 'reward', ['reward_std']),
      ...mechanismChart(
        'constant-share',
        "Each agent's turns in varying groups whose own rewards are constant (no per-agent gradient)",
        'fraction',
        ['constant_share'],
        false,
        [0, 1],
      ),
    ],
  });

  // One panel per agent.
  const agentKeys = take((k) => AGENT.test(k));
  for (const [agent, ks] of groupBy(agentKeys, (k) => k.match(AGENT)![1]!)) {
    const name = (k: string) => k.match(AGENT)![2]!;
    const rates = ks.filter((k) => /(reward|fraction)/.test(name(k)));
    const lengths = ks.filter((k) => !rates.includes(k));
    panel({
      id: `agent-${agent}`,
      section: 'Agents',
      title: `Agent ${agent}`,
      charts: [
        ...chart({
          id: `agent-${agent}-rates`,
          title: `${agent}: mean turn reward, valid and truncated fractions`,
          leftLabel: 'reward / fraction',
          series: rates.map((k) => s(k, 'left', { label: name(k) })),
        }),
        ...chart({
          id: `agent-${agent}-lengths`,
          title: `${agent}: response length and turns per step`,
          leftLabel: UNITS.tokens,
          series: lengths.map((k) => s(k, 'left', { label: name(k) })),
        }),
      ],
    });
  }

  // One panel per worker group: the optimizer's view.
  const groupKeys = take((k) => GROUP.test(k));
  const groupOf = (k: string) => {
    const m = k.match(GROUP)!;
    return m[2] ?? m[4]!;
  };
  const metricOf = (k: string) => {
    const m = k.match(GROUP)!;
    return m[3] ?? m[5]!;
  };
  for (const [group, ks] of groupBy(groupKeys, groupOf)) {
    const pick = (predicate: (metric: string) => boolean) => {
      const found = ks.filter((k) => !picked.has(k) && predicate(metricOf(k)));
      found.forEach((k) => picked.add(k));
      return found;
    };
    const picked = new Set<string>();
    const label = (k: string) => (k.startsWith('critic/') ? `critic ${metricOf(k)}` : metricOf(k));
    const grad = pick((m) => /^grad_norm(_max)?$/.test(m));
    const losses = pick((m) => /loss$/.test(m));
    const kl = pick((m) => /(^|_)kl$|^kl_/.test(m) && !m.endsWith('loss'));
    const entropy = pick((m) => m === 'entropy');
    const lr = pick((m) => m === 'lr');
    const probs = pick((m) => m.startsWith('probs_diff'));
    const fractions = pick((m) => /(clipfrac|clipfrac_lower|rows_skipped)$/.test(m));
    const counts = pick((m) => /^(skipped_steps|skipped_nonfinite|updates|micro_batches)$/.test(m));
    const rest = ks.filter((k) => !picked.has(k));
    const simple = (id: string, title: string, leftLabel: string, list: string[], log = false) =>
      chart({ id: `group-${group}-${id}`, title, leftLabel, series: list.map((k) => s(k, 'left', { label: label(k) })), log });
    panel({
      id: `group-${group}`,
      section: 'Worker groups',
      title: `Worker group ${group}`,
      charts: [
        ...simple('loss', 'Loss', 'loss', losses),
        ...simple('grad_norm', 'Gradient norm', 'norm', grad, true),
        ...chart({
          id: `group-${group}-kl`,
          title: 'KL and entropy',
          leftLabel: 'KL',
          rightLabel: 'entropy (nats per token)',
          series: [...kl.map((k) => s(k, 'left', { label: label(k) })), ...entropy.map((k) => s(k, 'right', { label: label(k) }))],
        }),
        ...simple('lr', 'Learning rate', 'lr', lr),
        ...chart({
          id: `group-${group}-skipped`,
          title: 'Clipped and skipped',
          leftLabel: UNITS.fraction,
          rightLabel: 'count',
          series: [...fractions.map((k) => s(k, 'left', { label: label(k) })), ...counts.map((k) => s(k, 'right', { label: label(k) }))],
        }),
        ...simple('probs_diff', 'Rollout engine vs trainer: |p - p\u2032| per token', 'probability', probs, true),
        ...simple('other', 'Other', 'value', rest),
      ],
    });
  }

  // Time and speed.
  const hooks = take((k) => k.startsWith('timing/') && k !== 'timing/step');
  const stepTime = take((k) => k === 'timing/step');
  panel({
    id: 'timing',
    section: 'Timing and throughput',
    title: 'Timing',
    charts: chart({
      id: 'timing',
      title: 'Wall time per hook and per step',
      leftLabel: 'seconds',
      series: [
        ...stepTime.map((k) => s(k, 'left', { label: 'step (total)', dashed: true })),
        ...hooks.map((k) => s(k, 'left', { label: k.slice(7) })),
      ],
    }),
  });
  const memoryLabels: Record<string, string> = {
    'perf/cpu_memory_used_gb': 'resident',
    'perf/max_cpu_memory_used_gb': 'peak resident',
    'perf/heap_used_gb': 'JavaScript heap',
  };
  const memoryKeys = new Set(take((k) => k in memoryLabels));
  const memory = Object.keys(memoryLabels).filter((k) => memoryKeys.has(k));
  panel({
    id: 'memory',
    section: 'Timing and throughput',
    title: 'Memory',
    charts: chart({
      id: 'memory',
      title: "The process's memory at the end of each step",
      leftLabel: 'GiB',
      series: memory.map((k) => s(k, 'left', { label: memoryLabels[k] })),
    }),
  });
  const speed = take((k) => /tokens?_per_s(ec(ond)?)?$|throughput/.test(k));
  const tokens = take((k) => k === 'response/tokens');
  panel({
    id: 'throughput',
    section: 'Timing and throughput',
    title: 'Throughput',
    charts: chart({
      id: 'throughput',
      title: 'Tokens per second (sampled tokens over the step time)',
      leftLabel: 'tokens / s',
      rightLabel: 'tokens per step',
      series: [...speed.map((k) => s(k)), ...tokens.map((k) => s(k, 'right'))],
    }),
  });

  // The rest, one chart per prefix: nothing recorded is left out of the page.
  const rest = take(() => true);
  panel({
    id: 'other',
    section: 'Other metrics',
    title: 'Other metrics',
    charts: [...groupBy(rest, (k) => (k.includes('/') ? k.slice(0, k.indexOf('/')) : k))].flatMap(([prefix, ks]) =>
      chart({ id: `other-${prefix}`, title: prefix, leftLabel: 'value', series: ks.map((k) => s(k)) }),
    ),
  });
  return panels;
}
