// A `drmas` command (a `train` step, typically) with the resident set of its whole process tree sampled from /proc
// every 0.2 s: prints the peak (GiB) and when it came, a line each time the resident set moved by a quarter GiB,
// and the step's phase times from the run's metrics.jsonl (`timing/*`, seconds). The command runs with
// `--set trainer.outputDir=OUT`; a run is stopped (and says so) when the machine's available memory falls under
// 1.5 GiB, so that a stopped run's peak says only that it needs more.
//
//   node bench/sizes/trainRun.mjs OUT -- train --config C --set trainer.steps=1 --set eval.atStart=false ...
//
// `npm run bench:sizes-train -- OUT -- train ...` builds first.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const separator = process.argv.indexOf('--');
const out = process.argv[2];
if (separator !== 3 || process.argv.length === 4) {
  console.error('usage: node bench/sizes/trainRun.mjs OUT -- <drmas arguments>');
  process.exit(2);
}
const args = [...process.argv.slice(4), '--set', `trainer.outputDir=${out}`];
const GiB = 2 ** 30;
const gib = (bytes) => +(bytes / GiB).toFixed(2);
const SAMPLE_MS = 200;
const STOP_BELOW = 1.5 * GiB;

/** Resident bytes of `root` and every process under it (VmRSS from /proc/<pid>/status). */
function treeResident(root) {
  const children = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // the process ended between the listing and the read
    }
  }
  let total = 0;
  const pending = [root];
  while (pending.length > 0) {
    const pid = pending.pop();
    try {
      const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (rss) total += Number(rss[1]) * 1024;
    } catch {
      continue;
    }
    pending.push(...(children.get(pid) ?? []));
  }
  return total;
}

const available = () => Number(/MemAvailable:\s+(\d+)/.exec(readFileSync('/proc/meminfo', 'utf8'))[1]) * 1024;
const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

const started = performance.now();
const seconds = () => +((performance.now() - started) / 1000).toFixed(1);
console.log(JSON.stringify({ command: ['drmas', ...args].join(' '), load: loadAverage() }));
const child = spawn(process.execPath, [new URL('../../core/bin/drmas.js', import.meta.url).pathname, ...args], {
  stdio: ['ignore', 'inherit', 'inherit'],
  detached: true,
});
let peak = { bytes: 0, at: 0 };
let shown = 0;
let stopped = false;
const timer = setInterval(() => {
  const bytes = treeResident(child.pid);
  if (bytes > peak.bytes) peak = { bytes, at: seconds() };
  if (Math.abs(bytes - shown) >= GiB / 4) {
    console.log(JSON.stringify({ at: seconds(), resident: gib(bytes), load: loadAverage() }));
    shown = bytes;
  }
  if (!stopped && available() < STOP_BELOW) {
    stopped = true;
    console.log(JSON.stringify({ at: seconds(), stopped: `the machine's available memory fell under ${gib(STOP_BELOW)} GiB` }));
    process.kill(-child.pid, 'SIGKILL');
  }
}, SAMPLE_MS);
const code = await new Promise((resolve) => child.on('exit', (status, signal) => resolve(status ?? signal)));
clearInterval(timer);

function findMetrics(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isFile() && entry.name === 'metrics.jsonl') return path;
    if (entry.isDirectory()) {
      const found = findMetrics(path);
      if (found) return found;
    }
  }
  return undefined;
}
const metricsFile = findMetrics(out);
const steps = metricsFile
  ? readFileSync(metricsFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .map((record) => Object.fromEntries(Object.entries(record).filter(([key]) => key === 'step' || key.startsWith('timing/'))))
  : [];
console.log(JSON.stringify({ exit: code, stopped, seconds: seconds(), peakGiB: gib(peak.bytes), peakAt: peak.at, load: loadAverage() }));
for (const step of steps) console.log(JSON.stringify(step));
process.exitCode = code === 0 ? 0 : 1;
