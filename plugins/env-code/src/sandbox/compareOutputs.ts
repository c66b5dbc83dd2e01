import { decodePlain, NotPlainData, showPlain } from './plainData.js';

const NUMBER_TOLERANCE = 1e-9;

/**
 * Deep equality of JSON values; numbers within 1e-9 (relative above 1), so `0.1 + 0.2` equals `0.3`. A
 * `NotPlainData` (a value that is not plain data, or that JSON cannot hold) equals nothing.
 */
export function jsonValuesEqual(actual: unknown, expected: unknown): boolean {
  if (actual instanceof NotPlainData || expected instanceof NotPlainData) return false;
  if (typeof actual === 'number' && typeof expected === 'number') {
    if (Number.isNaN(actual) || Number.isNaN(expected)) return Number.isNaN(actual) && Number.isNaN(expected);
    return Math.abs(actual - expected) <= NUMBER_TOLERANCE * Math.max(1, Math.abs(expected));
  }
  if (Array.isArray(actual) || Array.isArray(expected)) {
    if (!Array.isArray(actual) || !Array.isArray(expected) || actual.length !== expected.length) return false;
    return actual.every((value, i) => jsonValuesEqual(value, expected[i]));
  }
  if (actual !== null && expected !== null && typeof actual === 'object' && typeof expected === 'object') {
    const a = actual as Record<string, unknown>;
    const e = expected as Record<string, unknown>;
    const keys = Object.keys(e);
    if (Object.keys(a).length !== keys.length) return false;
    return keys.every((key) => Object.hasOwn(a, key) && jsonValuesEqual(a[key], e[key]));
  }
  return actual === expected;
}

/**
 * Judges a `call` test from the plain-data text of the value the solution returned (see plainData.ts; `undefined`
 * and `None` arrive as `null`). Returns the failure message, or undefined when the value is the expected one.
 */
export function callMismatch(actualText: string, expected: unknown): string | undefined {
  return valueMismatch(decodePlain(actualText), expected);
}

/** JavaScript's `assertEqual` in the judge: both sides as plain-data text, compared as `call` tests are. */
export function plainMismatch(actualText: string, expectedText: string): string | undefined {
  return valueMismatch(decodePlain(actualText), decodePlain(expectedText));
}

function valueMismatch(actual: unknown, expected: unknown): string | undefined {
  return jsonValuesEqual(actual, expected) ? undefined : `expected ${clip(showPlain(expected))}, got ${clip(showPlain(actual))}`;
}

/** Printed output against the expected output: lines compared with trailing whitespace and trailing blank lines dropped. */
export function stdoutMismatch(actual: string, expected: string): string | undefined {
  const lines = (text: string) =>
    text
      .replace(/\r\n?/g, '\n')
      .trimEnd()
      .split('\n')
      .map((line) => line.trimEnd());
  const a = lines(actual);
  const e = lines(expected);
  const at = e.findIndex((line, i) => a[i] !== line);
  if (at === -1 && a.length === e.length) return undefined;
  const line = at === -1 ? e.length : at;
  return `output line ${line + 1}: expected ${JSON.stringify(e[line] ?? '<end of output>')}, got ${JSON.stringify(a[line] ?? '<end of output>')}`;
}

function clip(text: string): string {
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
