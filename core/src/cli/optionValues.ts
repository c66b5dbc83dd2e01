import { DrmasError } from '../errors/DrmasError.js';

/** Bounds and the example shown in the hint of a numeric command-line option. */
export interface NumericOptionSpec {
  min: number;
  max?: number;
  /** The value is strictly above `min` (a learning rate, a temperature's scale). */
  exclusiveMin?: boolean;
  /** Shown as `e.g. --key <example>`; defaults to `min` (or 1 above an exclusive minimum). */
  example?: number | string;
  /** Said after the example in the hint: what the value changes, what to do instead. */
  note?: string;
  /** What a value counts, said in the message: `expects a whole number of samples per task of 1 or more`. */
  of?: string;
}

const WHOLE = /^[-+]?\d+$/;
const DECIMAL = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

function range(spec: NumericOptionSpec): string {
  const low = spec.exclusiveMin ? `above ${spec.min}` : `${spec.min}`;
  if (spec.max === undefined) return spec.exclusiveMin ? low : `of ${low} or more`;
  return spec.exclusiveMin ? `${low} and at most ${spec.max}` : `from ${low} to ${spec.max}`;
}

function optionError(key: string, expected: string, raw: unknown, spec: NumericOptionSpec): DrmasError {
  const example = spec.example ?? (spec.exclusiveMin ? spec.min + 1 : spec.min);
  return new DrmasError('INVALID_ARGUMENT', `expects ${expected} ${range(spec)}, got ${JSON.stringify(raw)}`, {
    key: `--${key}`,
    hint: `e.g. --${key} ${example}${spec.note ? ` (${spec.note})` : ''}`,
  });
}

function inRange(value: number, spec: NumericOptionSpec): boolean {
  if (spec.exclusiveMin ? value <= spec.min : value < spec.min) return false;
  return spec.max === undefined || value <= spec.max;
}

/**
 * `--key`'s value as a whole number written in decimal digits within the spec's bounds, or undefined when the option
 * is absent. `Number()` alone would take `0x10`, `1e3`, `1.5` or an empty string; every command reads its counts,
 * seeds and ports here so they accept the same spellings.
 */
export function integerOption(values: Readonly<Record<string, unknown>>, key: string, spec: NumericOptionSpec): number | undefined {
  const raw = values[key];
  if (raw === undefined) return undefined;
  const text = typeof raw === 'string' ? raw.trim() : '';
  const value = WHOLE.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || !inRange(value, spec)) {
    throw optionError(key, spec.of ? `a whole number of ${spec.of}` : 'a whole number', raw, spec);
  }
  return value;
}

/** `--key`'s value as a finite decimal number (`0.5`, `3e-4`) within the spec's bounds, or undefined when absent. */
export function numberOption(values: Readonly<Record<string, unknown>>, key: string, spec: NumericOptionSpec): number | undefined {
  const raw = values[key];
  if (raw === undefined) return undefined;
  const text = typeof raw === 'string' ? raw.trim() : '';
  const value = DECIMAL.test(text) ? Number(text) : Number.NaN;
  if (!Number.isFinite(value) || !inRange(value, spec)) throw optionError(key, spec.of ? `a number of ${spec.of}` : 'a number', raw, spec);
  return value;
}
