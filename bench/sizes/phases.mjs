// The sizes benchmarks' phase lines: one JSON line per phase with its seconds, the resident set and its high-water
// mark (`/proc/self/status` VmRSS, VmHWM) and JS ArrayBuffers, in GiB.
import { readFileSync } from 'node:fs';

const gib = (bytes) => +(bytes / 2 ** 30).toFixed(2);

/** The resident set, its high-water mark and JS ArrayBuffers now, in GiB. */
export function memory() {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kib = (key) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)[1]) * 1024;
  return { rss: gib(kib('VmRSS')), hwm: gib(kib('VmHWM')), arrayBuffers: gib(process.memoryUsage().arrayBuffers) };
}

let last = performance.now();

/** Prints the phase just ended: seconds since the previous mark, memory now, and `extra`. */
export function mark(phase, extra = {}) {
  const now = performance.now();
  console.log(JSON.stringify({ phase, seconds: +((now - last) / 1000).toFixed(1), ...memory(), ...extra }));
  last = now;
}

/**
 * The size scripts' fixed tokens (mirrored in bench/sizes/torch_tokens.py): ROWS prompts of `promptTokens`,
 * (r * 31 + j * 17 + 1) % vocab, and responses of `responseTokens`, (r * 7919 + j * 104729) % vocab.
 */
export function sizeTokens(rows, promptTokens, responseTokens, vocab) {
  const rowsOf = (length, token) => Array.from({ length: rows }, (_, r) => Int32Array.from({ length }, (_, j) => token(r, j) % vocab));
  return {
    prompts: rowsOf(promptTokens, (r, j) => r * 31 + j * 17 + 1),
    responses: rowsOf(responseTokens, (r, j) => r * 7919 + j * 104729),
  };
}

/** `models.<id>.backwardSegments` from the SEGMENTS variable: auto (unset) or a number. */
export function segmentsFromEnv() {
  const segments = process.env.SEGMENTS;
  return segments === undefined || segments === 'auto' ? 'auto' : Number(segments);
}
