import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT, TempProject } from './support/tempProject.js';

const SCRIPT = path.join(REPO_ROOT, 'scripts', 'agent-mechanism.mjs');

/** One step's turns of a run's rollout log: agent a and b in groups g0 and g2 (the hand-worked batch of agentDiagnostics.test.ts). */
const TURNS: [string, string, number][] = [
  ['g0', 'a', 1],
  ['g0', 'a', 0],
  ['g0', 'b', 1],
  ['g0', 'b', 1],
  ['g2', 'a', 0],
  ['g2', 'a', 0],
  ['g2', 'b', 1],
  ['g2', 'b', 0],
];
const rollouts = (turns = TURNS) => turns.map(([groupId, agent, reward]) => JSON.stringify({ step: 1, groupId, agent, reward })).join('\n');

/** A step metrics line from before `constant_share` and `inflation_advantages` were logged. */
const metrics = (predicted: number, measured = { a: 3, b: 5 }) =>
  JSON.stringify({
    step: 1,
    'outcome/mean': 0.5,
    'agent/a/turns': 4,
    'agent/b/turns': 4,
    'agent/a/inflation_predicted': predicted,
    'agent/b/inflation_predicted': predicted,
    'agent/a/inflation_measured': measured.a,
    'agent/b/inflation_measured': measured.b,
  });

/** The script's output on runs written from `files` (one object a run), with `options` before them. */
function mechanism(files: Record<string, string> | Record<string, string>[], options: string[] = []): string {
  const runs = (Array.isArray(files) ? files : [files]).map((run) => new TempProject('agent-mechanism').write(run));
  try {
    const result = spawnSync(process.execPath, [SCRIPT, ...options, ...runs.map((run) => run.dir)], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    return result.stdout;
  } finally {
    for (const run of runs) run.dispose();
  }
}

describe('scripts/agent-mechanism.mjs on a run that predates constant_share and inflation_advantages', () => {
  test("recomputes them from rollouts.jsonl: each agent half constant in a varying group, the formula's 1 pooled to 2", () => {
    // Hand-worked in agentDiagnostics.test.ts: per group the formula gives 5/3 and 1/3 (mean 1) to each agent; its
    // squared advantages sum to 4 under the global baseline and 2 under its own; its within-group std is 0.5 and 0.
    const out = mechanism({ 'metrics.jsonl': metrics(1), 'rollouts.jsonl': rollouts() });
    expect(out).toContain('recomputed from rollouts.jsonl');
    expect(out).toContain('| a | - | 0.250 | - | - | 0.500 | 1.000 | 2.000 | 3.000 |');
    expect(out).toContain('| b | - | 0.250 | - | - | 0.500 | 1.000 | 2.000 | 5.000 |');
  });

  test('leaves them out, saying why, when the log does not reproduce the logged prediction or holds part of a step', () => {
    const differs = mechanism({ 'metrics.jsonl': metrics(0.9), 'rollouts.jsonl': rollouts() });
    expect(differs).toContain(
      "not available: its turns do not reproduce step 1's agent/a/inflation_predicted (0.9 logged, 1 from rollouts.jsonl)",
    );
    expect(differs).toContain('| a | - | - | - | - | - | 0.900 | - | 3.000 |');
    const part = mechanism({ 'metrics.jsonl': metrics(1), 'rollouts.jsonl': rollouts(TURNS.slice(0, 6)) });
    expect(part).toContain("rollouts.jsonl has 6 of step 1's 8 turns (trainer.logRollouts keeps the first trajectories");
    const none = mechanism({ 'metrics.jsonl': metrics(1) });
    expect(none).toContain('not available: no rollouts.jsonl');
  });

  test("--mean: one table, each figure the mean of the runs' figures", () => {
    const out = mechanism(
      [
        { 'metrics.jsonl': metrics(1), 'rollouts.jsonl': rollouts() },
        { 'metrics.jsonl': metrics(1, { a: 7, b: 1 }), 'rollouts.jsonl': rollouts() },
      ],
      ['--mean'],
    );
    expect(out).toContain('means over 2 runs (1, 1 steps), outcome/mean 0.500');
    expect(out).toContain('| a | - | 0.250 | - | - | 0.500 | 1.000 | 2.000 | 5.000 |');
    expect(out).toContain('| b | - | 0.250 | - | - | 0.500 | 1.000 | 2.000 | 3.000 |');
  });
});

describe('scripts/agent-mechanism.mjs --held-out', () => {
  test("one row per run from its last evaluation, in percent; '-' for an agent that never ran", () => {
    const evaluation = (avg: number, pass: number, valid: Record<string, number>) =>
      JSON.stringify({
        step: 60,
        'val/avg@16': avg,
        'val/pass@16': pass,
        ...Object.fromEntries(Object.entries(valid).map(([role, v]) => [`val/agent/${role}/valid_fraction`, v])),
      });
    const out = mechanism(
      [
        { 'eval.jsonl': `${evaluation(0, 0, { a: 0.5, b: 1 })}\n${evaluation(0.018, 0.125, { a: 0.984, b: 0.5 })}\n` },
        { 'eval.jsonl': `${evaluation(0.25, 1, { a: 0 })}\n` },
      ],
      ['--held-out'],
    );
    const rows = out.trim().split('\n');
    expect(rows[0]).toBe('| run | avg@16 | pass@16 | valid: a | valid: b |');
    expect(rows.slice(2).map((row) => row.replace(/^\| [^|]+ /, '| run '))).toEqual([
      '| run | 1.8 | 12.5 | 98% | 50% |',
      '| run | 25.0 | 100.0 | 0% | - |',
    ]);
  });

  test('a run without an evaluation is named, with what to do', () => {
    const run = new TempProject('agent-mechanism').write({ 'metrics.jsonl': metrics(1) });
    try {
      const result = spawnSync(process.execPath, [SCRIPT, '--held-out', run.dir], { cwd: REPO_ROOT, encoding: 'utf8' });
      expect(result.status).toBe(1);
      expect(result.stderr).toBe(
        `${run.dir}: no evaluation (${path.join(run.dir, 'eval.jsonl')} is missing or empty); run the evaluation or leave the run out\n`,
      );
    } finally {
      run.dispose();
    }
  });
});
