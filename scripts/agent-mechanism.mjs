#!/usr/bin/env node
// Prints the per-agent mechanism figures of runs trained with `trainer.agentDiagnostics: true`, one table per run:
// the agent's turn reward mean and within-group std, its gradient-norm share (median over steps of the per-step mean,
// and the largest optimizer step), and the inflation of a global baseline, predicted and measured (means over steps).
//
//   node scripts/agent-mechanism.mjs RUN_DIR [RUN_DIR ...]
import { readFileSync } from 'node:fs';
import path from 'node:path';

const runs = process.argv.slice(2);
if (runs.length === 0) {
  process.stderr.write('usage: node scripts/agent-mechanism.mjs RUN_DIR [RUN_DIR ...]\n');
  process.exit(1);
}

const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
const median = (xs) => {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const fmt = (x) => (Number.isFinite(x) ? x.toFixed(3) : '-');

for (const run of runs) {
  // Bare NaN / Infinity can appear in metrics lines; they parse as null here and are skipped.
  const lines = readFileSync(path.join(run, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line.replace(/\b(-?Infinity|NaN)\b/g, 'null')))
    .filter((line) => typeof line.step === 'number' && line.step > 0);
  const values = (key) => lines.map((line) => line[key]).filter((x) => typeof x === 'number');
  const roles = [
    ...new Set(lines.flatMap((line) => Object.keys(line).flatMap((key) => key.match(/^agent\/([^/]+)\/inflation_predicted$/)?.[1] ?? []))),
  ];
  process.stdout.write(`\n${run}: ${lines.length} steps, outcome/mean ${fmt(mean(values('outcome/mean')))}\n\n`);
  process.stdout.write(
    '| agent | reward mean | reward std (in group) | grad norm (median) | grad norm max | inflation predicted | inflation measured |\n',
  );
  process.stdout.write('| --- | --- | --- | --- | --- | --- | --- |\n');
  for (const role of roles) {
    const key = (name) => `agent/${role}/${name}`;
    const max = values(key('grad_norm_max'));
    process.stdout.write(
      `| ${role} | ${fmt(mean(values(key('reward_mean'))))} | ${fmt(mean(values(key('reward_std'))))} | ${fmt(median(values(key('grad_norm'))))} | ` +
        `${fmt(max.length ? Math.max(...max) : NaN)} | ${fmt(mean(values(key('inflation_predicted'))))} | ${fmt(mean(values(key('inflation_measured'))))} |\n`,
    );
  }
}
