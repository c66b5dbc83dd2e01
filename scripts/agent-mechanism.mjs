#!/usr/bin/env node
// Prints the per-agent mechanism figures of runs trained with `trainer.agentDiagnostics: true`, one table per run:
// the agent's turn reward mean and within-group std, its gradient-norm share (median over steps of the per-step mean,
// and the largest optimizer step), the share of its turns with constant rewards in a varying group, and the inflation
// of a global baseline: predicted by the formula, pooled from the advantages, and measured (means over steps).
//
//   node scripts/agent-mechanism.mjs [--mean | --held-out] RUN_DIR [RUN_DIR ...]
//
// --mean prints one table instead: each figure the mean over the runs of each run's figure (seeds of one variant).
// --held-out prints one row per run from its last evaluation (eval.jsonl): avg@k, pass@k and each agent's share of
// turns in its format (`val/agent/<role>/valid_fraction`), `-` where the agent never ran.
//
// A run from before `constant_share` and `inflation_advantages` were logged gets them from its rollouts.jsonl (every
// turn's step, prompt group, agent and reward), through the trainer's own statistics, once the rollout log is checked
// to reproduce the logged `inflation_predicted` of every step (it does not where rows were dropped before the update).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { idColumn } from '@drmas/core';
import { agentRewardMetrics, diagnoseTurnRewards } from '@drmas/plugin-trainer';

const MODES = ['--mean', '--held-out'];
const pooled = process.argv.includes('--mean');
const heldOut = process.argv.includes('--held-out');
const runs = process.argv.slice(2).filter((arg) => !MODES.includes(arg));
process.stdout.on('error', (error) => process.exit(error.code === 'EPIPE' ? 0 : 1));
if (runs.length === 0 || (pooled && heldOut)) {
  process.stderr.write('usage: node scripts/agent-mechanism.mjs [--mean | --held-out] RUN_DIR [RUN_DIR ...]\n');
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
const readLines = (file) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    // Bare NaN / Infinity can appear in metrics lines; they parse as null here and are skipped.
    .map((line) => JSON.parse(line.replace(/\b(-?Infinity|NaN)\b/g, 'null')));

/**
 * Each step's agent statistics recomputed from the run's rollout log, or why they cannot be: the log must give the
 * logged `inflation_predicted` of every agent at every step (relative difference 1e-9), present where it is.
 */
function statisticsFromRollouts(run, lines) {
  const file = path.join(run, 'rollouts.jsonl');
  if (!existsSync(file)) return { why: 'no rollouts.jsonl' };
  const turnsByStep = new Map();
  for (const turn of readLines(file)) {
    if (!turnsByStep.has(turn.step)) turnsByStep.set(turn.step, []);
    turnsByStep.get(turn.step).push(turn);
  }
  const byStep = new Map();
  for (const line of lines) {
    const turns = turnsByStep.get(line.step);
    if (!turns) return { why: `rollouts.jsonl has no turns of step ${line.step}` };
    const batchTurns = Object.entries(line).reduce((n, [key, value]) => n + (/^agent\/[^/]+\/turns$/.test(key) ? value : 0), 0);
    if (turns.length < batchTurns) {
      return {
        why:
          `rollouts.jsonl has ${turns.length} of step ${line.step}'s ${batchTurns} turns ` +
          '(trainer.logRollouts keeps the first trajectories of each step, 16 by default: set it to prompts x samples to log them all)',
      };
    }
    const diagnosis = diagnoseTurnRewards({
      rewards: Float64Array.from(turns, (t) => t.reward),
      groups: idColumn(turns.map((t) => t.groupId)),
      agents: idColumn(turns.map((t) => t.agent)),
    });
    const metrics = Object.assign({}, ...diagnosis.agents.map(agentRewardMetrics));
    for (const agent of diagnosis.agents) {
      const key = `agent/${agent.role}/inflation_predicted`;
      const [logged, recomputed] = [line[key], metrics[key]];
      const same = logged === undefined ? recomputed === undefined : Math.abs(logged - recomputed) <= 1e-9 * Math.max(1, Math.abs(logged));
      if (!same)
        return {
          why: `its turns do not reproduce step ${line.step}'s ${key} (${logged} logged, ${recomputed === undefined ? 'none' : Number(recomputed.toPrecision(6))} from rollouts.jsonl)`,
        };
    }
    byStep.set(line.step, metrics);
  }
  return { byStep };
}

const COLUMNS = [
  'reward mean',
  'reward std (in group)',
  'grad norm (median)',
  'grad norm max',
  'constant share',
  'inflation predicted',
  'inflation (advantages)',
  'inflation measured',
];
const table = (rows) =>
  `| agent | ${COLUMNS.join(' | ')} |\n| --- |${' --- |'.repeat(COLUMNS.length)}\n` +
  rows.map(([role, figures]) => `| ${role} | ${figures.map(fmt).join(' | ')} |\n`).join('');

/** One run's figures per agent, in COLUMNS' order, and a line on where the pooled columns came from. */
function runFigures(run) {
  const lines = readLines(path.join(run, 'metrics.jsonl')).filter((line) => typeof line.step === 'number' && line.step > 0);
  const roles = [
    ...new Set(lines.flatMap((line) => Object.keys(line).flatMap((key) => key.match(/^agent\/([^/]+)\/inflation_predicted$/)?.[1] ?? []))),
  ];
  let note = '';
  if (lines.length && !lines.some((line) => Object.keys(line).some((key) => key.endsWith('/inflation_advantages')))) {
    const { byStep, why } = statisticsFromRollouts(run, lines);
    if (byStep) {
      for (const line of lines) Object.assign(line, { ...byStep.get(line.step), ...line });
      note = 'constant share and inflation (advantages) recomputed from rollouts.jsonl (the run predates those metrics)';
    } else note = `constant share and inflation (advantages) not available: ${why}`;
  }
  const values = (key) => lines.map((line) => line[key]).filter((x) => typeof x === 'number');
  const agents = new Map(
    roles.map((role) => {
      const key = (name) => `agent/${role}/${name}`;
      const max = values(key('grad_norm_max'));
      const means = ['constant_share', 'inflation_predicted', 'inflation_advantages', 'inflation_measured'].map((name) =>
        mean(values(key(name))),
      );
      return [
        role,
        [
          mean(values(key('reward_mean'))),
          mean(values(key('reward_std'))),
          median(values(key('grad_norm'))),
          max.length ? Math.max(...max) : NaN,
          ...means,
        ],
      ];
    }),
  );
  return { steps: lines.length, outcome: mean(values('outcome/mean')), note, agents };
}

/** Each run's last evaluation: avg@k and pass@k in percent, and each agent's valid fraction. */
function heldOutTable() {
  const lasts = runs.map((run) => {
    const file = path.join(run, 'eval.jsonl');
    const lines = existsSync(file) ? readLines(file) : [];
    if (lines.length === 0) {
      process.stderr.write(`${run}: no evaluation (${file} is missing or empty); run the evaluation or leave the run out\n`);
      process.exit(1);
    }
    return lines.at(-1);
  });
  const roles = [
    ...new Set(lasts.flatMap((last) => Object.keys(last).flatMap((key) => key.match(/^val\/agent\/([^/]+)\/valid_fraction$/)?.[1] ?? []))),
  ];
  const metric = (last, name) => Object.keys(last).find((key) => new RegExp(`^val/${name}@\\d+$`).test(key));
  const k = metric(lasts[0], 'avg')?.split('@')[1] ?? 'k';
  const percent = (x, digits, unit = '') => (typeof x === 'number' ? `${(100 * x).toFixed(digits)}${unit}` : '-');
  return (
    `| run | avg@${k} | pass@${k} | ${roles.map((role) => `valid: ${role}`).join(' | ')} |\n` +
    `| --- | --- | --- |${' --- |'.repeat(roles.length)}\n` +
    lasts
      .map((last, i) => {
        const [avg, pass] = ['avg', 'pass'].map((name) => percent(last[metric(last, name)], 1));
        const valid = roles.map((role) => percent(last[`val/agent/${role}/valid_fraction`], 0, '%'));
        return `| ${path.basename(runs[i])} | ${avg} | ${pass} | ${valid.join(' | ')} |\n`;
      })
      .join('')
  );
}

if (heldOut) {
  process.stdout.write(heldOutTable());
  process.exit(0);
}
const figures = runs.map((run) => ({ run, ...runFigures(run) }));
if (pooled) {
  // Each figure: the mean over the runs that have it of each run's figure.
  const roles = [...new Set(figures.flatMap((f) => [...f.agents.keys()]))];
  const rows = roles.map((role) => [
    role,
    COLUMNS.map((_, i) => mean(figures.map((f) => f.agents.get(role)?.[i]).filter(Number.isFinite))),
  ]);
  const notes = [...new Set(figures.map((f) => f.note).filter(Boolean))];
  process.stdout.write(
    `\nmeans over ${runs.length} runs (${figures.map((f) => f.steps).join(', ')} steps), outcome/mean ${fmt(mean(figures.map((f) => f.outcome)))}\n\n` +
      notes.map((note) => `${note}\n\n`).join('') +
      table(rows),
  );
} else {
  for (const { run, steps, outcome, note, agents } of figures) {
    process.stdout.write(`\n${run}: ${steps} steps, outcome/mean ${fmt(outcome)}\n\n${note ? `${note}\n\n` : ''}${table([...agents])}`);
  }
}
