import { AlgorithmInputError } from '../errors.js';
import { unknownNameError } from '../nameSuggestion.js';
import { STATISTICS_UNITS, type ResolvedAdvantageOptions, type StatisticsUnit } from './types.js';

/** The options every estimator reads as numbers; a role with an estimator of its own inherits these from `algorithm`. */
export const NUMERIC_OPTIONS = [
  'normalizeByStd',
  'epsilon',
  'gamma',
  'lam',
  'stepAdvantageWeight',
  'raeDecay',
  'gigpoMode',
  'similarityThreshold',
] as const;
/** Options that say how `algorithm.advantage`'s estimator groups rows: a role with its own estimator sets its own. */
export const GROUPING_OPTIONS = ['groupKey', 'excludeZeroStdGroups', 'statisticsUnit'] as const;
const KNOWN_OPTIONS: readonly string[] = [...NUMERIC_OPTIONS, ...GROUPING_OPTIONS];

function finite(options: Record<string, unknown>, name: string, fallback: number, min = -Infinity): number {
  const v = options[name];
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min) {
    throw new AlgorithmInputError(
      `options.${name}`,
      `must be a finite number${min > -Infinity ? ` >= ${min}` : ''}, got ${JSON.stringify(v)}`,
    );
  }
  return v;
}

function decay(value: unknown): number {
  if (value === undefined) return 0.95;
  if (typeof value !== 'number' || !(value >= 0 && value < 1)) {
    throw new AlgorithmInputError('options.raeDecay', `must be in [0, 1), got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Defaults and checks the numeric advantage options (veRL defaults: eps 1e-6, gamma 1, lam 1). */
export function resolveAdvantageOptions(options: object | undefined): ResolvedAdvantageOptions {
  const o = (options ?? {}) as Record<string, unknown>;
  if (typeof o !== 'object') throw new AlgorithmInputError('options', 'must be an object');
  for (const k of Object.keys(o)) {
    if (!KNOWN_OPTIONS.includes(k) && o[k] !== undefined) throw unknownNameError(`options.${k}`, 'advantage option', k, KNOWN_OPTIONS);
  }
  const normalizeByStd = o.normalizeByStd ?? true;
  if (typeof normalizeByStd !== 'boolean') throw new AlgorithmInputError('options.normalizeByStd', 'must be a boolean');
  const gigpoMode = o.gigpoMode ?? 'mean_norm';
  if (gigpoMode !== 'mean_norm' && gigpoMode !== 'mean_std_norm') {
    throw unknownNameError('options.gigpoMode', 'GiGPO mode', gigpoMode, ['mean_norm', 'mean_std_norm']);
  }
  const threshold = o.similarityThreshold;
  if (threshold !== undefined && (typeof threshold !== 'number' || !(threshold > 0 && threshold <= 1))) {
    throw new AlgorithmInputError('options.similarityThreshold', `must be in (0, 1], got ${JSON.stringify(threshold)}`);
  }
  const unit = o.statisticsUnit;
  if (unit !== undefined && !STATISTICS_UNITS.includes(unit as StatisticsUnit)) {
    throw unknownNameError('options.statisticsUnit', 'statistics unit', unit, STATISTICS_UNITS);
  }
  return {
    normalizeByStd,
    epsilon: finite(o, 'epsilon', 1e-6, 0),
    gamma: finite(o, 'gamma', 1, 0),
    lam: finite(o, 'lam', 1, 0),
    stepAdvantageWeight: finite(o, 'stepAdvantageWeight', 1),
    raeDecay: decay(o.raeDecay),
    gigpoMode,
    similarityThreshold: threshold,
    statisticsUnit: unit as StatisticsUnit | undefined,
  };
}
