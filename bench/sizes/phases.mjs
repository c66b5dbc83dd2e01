// The sizes benchmarks' phase lines: one JSON line per phase with its seconds, the resident set and its high-water
// mark (`/proc/self/status` VmRSS, VmHWM) and JS ArrayBuffers, in GiB.
import { readFileSync } from 'node:fs';

const gib = (bytes) => +(bytes / 2 ** 30).toFixed(2);

function memory() {
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
