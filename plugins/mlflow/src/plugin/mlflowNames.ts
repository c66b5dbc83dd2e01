import type { MlflowMetric } from '../client/MlflowClient.js';
import { MAX_PARAM_VALUE_LENGTH, type KeyValue } from '../client/MlflowClient.js';

/**
 * A metric or param name MLflow accepts: it allows only letters, digits, `_`, `-`, `.`, ` ` and `/` (and `:` except on
 * Windows servers; mlflow/utils/validation.py), so `val/avg@16` becomes `val/avg_at_16` and any other character `_`.
 * Names are also file paths to it (`path_not_unique`): one that a path normalization would change is refused, so an
 * empty or `.` segment becomes `_` and a `..` one `__` (`a//b` reads `a/_/b`, `/x` reads `_/x`).
 */
export function mlflowName(name: string): string {
  return name
    .replaceAll('@', '_at_')
    .replace(/[^\w./ -]/g, '_')
    .split('/')
    .map((segment) => (segment === '' || segment === '.' ? '_' : segment === '..' ? '__' : segment))
    .join('/')
    .replace(/^\.\./, '_..');
}

/** A metric value as protobuf JSON spells it: non-finite numbers are strings. */
export function mlflowValue(value: number): MlflowMetric['value'] {
  if (Number.isFinite(value)) return value;
  if (Number.isNaN(value)) return 'NaN';
  return value > 0 ? 'Infinity' : '-Infinity';
}

/** The config as params: one per leaf (an array is a leaf), named by its key path, valued as JSON (cut at MLflow's limit). */
export function configParams(config: unknown, prefix = ''): KeyValue[] {
  if (config !== null && typeof config === 'object' && !Array.isArray(config)) {
    return Object.entries(config).flatMap(([key, value]) => configParams(value, prefix ? `${prefix}.${key}` : key));
  }
  const text = typeof config === 'string' ? config : (JSON.stringify(config) ?? 'undefined');
  return [{ key: mlflowName(prefix), value: text.slice(0, MAX_PARAM_VALUE_LENGTH) }];
}
