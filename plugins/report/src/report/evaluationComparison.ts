import { decodeValue, type Series } from './reportData.js';

export interface EvaluationRow {
  /** `overall`, `data source <name>` or `agent <id>`. */
  scope: string;
  metric: string;
  key: string;
  first: number;
  last: number;
}

export interface EvaluationComparison {
  firstStep: number;
  lastStep: number;
  rows: EvaluationRow[];
}

const VAL = /^val\/(?:agent\/([^/]+)\/([^/]+)|([^/]+)\/([^/]+)|([^/]+))$/;

function scopeOf(key: string): { scope: string; metric: string; order: number } | undefined {
  const m = key.match(VAL);
  if (!m) return undefined;
  if (m[1]) return { scope: `agent ${m[1]}`, metric: m[2]!, order: 2 };
  if (m[3]) return { scope: `data source ${m[3]}`, metric: m[4]!, order: 1 };
  return { scope: 'overall', metric: m[5]!, order: 0 };
}

/**
 * The first and the last evaluation side by side: every `val/*` metric at the earliest and the latest step that has
 * evaluation values, overall first, then per data source, then per agent. `undefined` without any evaluation.
 */
export function compareEvaluations(series: Record<string, Series>): EvaluationComparison | undefined {
  const keys = Object.keys(series).filter((k) => scopeOf(k));
  const steps = keys.flatMap((k) => series[k]!.steps);
  if (steps.length === 0) return undefined;
  const firstStep = Math.min(...steps);
  const lastStep = Math.max(...steps);
  const at = (key: string, step: number) => {
    const s = series[key]!;
    const i = s.steps.indexOf(step);
    return i < 0 ? Number.NaN : decodeValue(s.values[i]!);
  };
  const rows = keys
    .map((key) => ({ key, ...scopeOf(key)! }))
    .sort((a, b) => a.order - b.order || a.scope.localeCompare(b.scope) || a.metric.localeCompare(b.metric))
    .map(({ key, scope, metric }) => ({ scope, metric, key, first: at(key, firstStep), last: at(key, lastStep) }));
  return { firstStep, lastStep, rows };
}
