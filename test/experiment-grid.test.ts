import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  GRID_RUN_FILE,
  type GridRun,
  planGrid,
  readArchive,
  readRun,
  renderTables,
  runGrid,
  runState,
  writeArchive,
} from '../examples/lib/experimentGrid.mjs';
import { gradNormStats, pairedTTest, summarize } from '../examples/lib/seedStatistics.mjs';
import { RUN_LOCK_FILE } from '@drmas/core';
import { TempProject } from './support/tempProject.js';

/** Student's t CDF with 2 and 3 degrees of freedom in closed form (the hand-worked oracle for jstat's). */
const tCdf2 = (t: number) => 0.5 + t / (2 * Math.sqrt(2 + t * t));
const tCdf3 = (t: number) => 0.5 + (1 / Math.PI) * (t / Math.sqrt(3) / (1 + (t * t) / 3) + Math.atan(t / Math.sqrt(3)));

describe('seed statistics', () => {
  test('the paired t-test of three seeds matches the hand-worked t, its closed-form p-value and scipy.stats.ttest_rel', () => {
    // Differences 0.04, 0.02, 0.07: mean 0.13/3, variance (0.0038/3)/2, t = mean / (sd / sqrt 3).
    const test = pairedTTest([0.24, 0.27, 0.29], [0.2, 0.25, 0.22])!;
    const sdDiff = Math.sqrt(0.0038 / 6);
    const t = 0.13 / 3 / (sdDiff / Math.sqrt(3));
    expect(test.n).toBe(3);
    expect(test.df).toBe(2);
    expect(test.meanDiff).toBeCloseTo(0.13 / 3, 12);
    expect(test.sdDiff).toBeCloseTo(sdDiff, 12);
    expect(test.t).toBeCloseTo(t, 9);
    expect(test.p).toBeCloseTo(2 * (1 - tCdf2(t)), 8);
    // scipy.stats.ttest_rel([0.24, 0.27, 0.29], [0.20, 0.25, 0.22]): statistic 2.9824045403173045, p 0.09643753908600927
    expect(test.t).toBeCloseTo(2.9824045403173045, 9);
    expect(test.p).toBeCloseTo(0.09643753908600927, 8);
  });

  test('four seeds: differences 0.2, -0.1, 0.3, 0.2 give t = sqrt(3) and p = 2(1 - F3(sqrt 3)) = 0.18169', () => {
    const test = pairedTTest([0.3, 0.1, 0.4, 0.2], [0.1, 0.2, 0.1, 0])!;
    expect(test.t).toBeCloseTo(Math.sqrt(3), 9);
    // F3(sqrt 3) = 1/2 + (1/pi)(1/2 + pi/4)
    expect(test.p).toBeCloseTo(2 * (1 - tCdf3(Math.sqrt(3))), 8);
    expect(test.p).toBeCloseTo(0.5 - 1 / Math.PI, 8);
  });

  test('degenerate pairs: fewer than two give no test; identical differences give p 0, all-zero ones p 1', () => {
    expect(pairedTTest([0.3], [0.1])).toBeNull();
    // Binary fractions, so that the differences are exactly equal.
    expect(pairedTTest([0.5, 0.75], [0.25, 0.5])).toMatchObject({ t: Infinity, p: 0 });
    expect(pairedTTest([0.3, 0.4], [0.3, 0.4])!.p).toBe(1);
    expect(() => pairedTTest([0.3, 0.4], [0.3])).toThrow(/2 values against 1/);
  });

  test('the 95% interval of three seeds is mean ± t(0.975, 2) sd / sqrt 3, t(0.975, 2) = 0.95 sqrt(2 / 0.0975)', () => {
    const s = summarize([0.24, 0.27, 0.29]);
    const half = 0.95 * Math.sqrt(2 / (4 * 0.975 * 0.025)) * (Math.sqrt(0.0038 / 6) / Math.sqrt(3));
    expect(s.mean).toBeCloseTo(0.8 / 3, 12);
    expect(s.sd).toBeCloseTo(Math.sqrt(0.0038 / 6), 12);
    expect(s.ci95![0]).toBeCloseTo(0.8 / 3 - half, 9);
    expect(s.ci95![1]).toBeCloseTo(0.8 / 3 + half, 9);
    expect(summarize([0.5]).ci95).toBeNull();
  });

  test('gradient norms: median, nearest-rank p99 and the steps above 5x the median', () => {
    expect(gradNormStats([1, 1.2, 0.8, 1, 6, NaN])).toEqual({ steps: 5, max: 6, p99: 6, median: 1, spikes: 1 });
    expect(gradNormStats([2, 1, 4, 3])).toMatchObject({ median: 2.5, spikes: 0 });
    // Zero norms (no learning signal) are left out: with them the median would be 0 and all three others spikes.
    expect(gradNormStats([0, 0, 0, 0, 1, 1, 6])).toEqual({ steps: 3, max: 6, p99: 6, median: 1, spikes: 1 });
  });
});

/** A finished training run in the shape `drmas train` writes: config.json, metrics.jsonl, eval.jsonl at the last step. */
function writeRun(
  project: TempProject,
  dir: string,
  options: { avg: number; pass: number; gradNorms: number[]; agents?: boolean; finished?: boolean },
) {
  const steps = options.gradNorms.length;
  project.write({
    [`${dir}/config.json`]: { trainer: { steps, seed: 0 }, rollout: { promptsPerStep: 8, samplesPerPrompt: 4 } },
    [`${dir}/metrics.jsonl`]: options.gradNorms
      .map((g, i) =>
        JSON.stringify({
          step: i + 1,
          'actor/policy/grad_norm': g,
          'actor/policy/grad_norm_max': g,
          'agent/solver/reward_mean': 0.1,
          ...(options.agents ? { 'agent/solver/grad_norm': g / 2, 'agent/solver/reward_std': 0.2 + i / 10 } : {}),
        }),
      )
      .join('\n'),
    [`${dir}/eval.jsonl`]: [
      JSON.stringify({ step: 0, 'val/avg@16': 0.2, 'val/pass@16': 0.5, 'val/tasks': 64 }),
      ...(options.finished === false
        ? []
        : [JSON.stringify({ step: steps, 'val/avg@16': options.avg, 'val/pass@16': options.pass, 'val/tasks': 64 })]),
    ].join('\n'),
  });
}

describe('experiment grid', () => {
  let project: TempProject;
  beforeEach(() => {
    project = new TempProject('grid', os.tmpdir());
  });
  afterEach(() => project.dispose());

  function planOptions() {
    return {
      variants: [
        { name: 'drmas', config: 'examples/marl/drmas.config.json', base: 'math' },
        { name: 'grpo', config: path.join(project.dir, 'missing.json'), base: 'math' },
        { name: 'rae', config: 'examples/marl/rae.config.json' },
      ],
      bases: { math: { config: 'examples/marl/drmas.config.json' } },
      seeds: [0, 1, 2],
      set: ['eval.tasks=64'],
    };
  }
  function plan() {
    return planGrid({ ...planOptions(), out: project.dir });
  }

  test('plans seeded training runs and one base evaluation per seed, and tells finished, interrupted and changed runs apart', () => {
    const runs = plan();
    expect(runs.map((r) => path.basename(r.runDir))).toEqual([
      ...[0, 1, 2].flatMap((s) => ['drmas', 'grpo', 'rae'].map((v) => `${v}-seed${s}`)),
      'base-math-seed0',
      'base-math-seed1',
      'base-math-seed2',
    ]);
    const drmas1 = runs.find((r) => r.variant === 'drmas' && r.seed === 1)!;
    expect(drmas1.args).toEqual([
      'train',
      '--config',
      'examples/marl/drmas.config.json',
      '--run-dir',
      drmas1.runDir,
      ...['trainer.seed=1', 'env.seed=1', 'eval.atStart=false', 'report.progress=lines', 'eval.tasks=64'].flatMap((s) => ['--set', s]),
    ]);
    const base2 = runs.find((r) => r.kind === 'base' && r.seed === 2)!;
    expect(base2.args).toEqual([
      'eval',
      '--config',
      'examples/marl/drmas.config.json',
      '--run-dir',
      base2.runDir,
      '--set',
      'trainer.seed=2',
      '--set',
      'env.seed=2',
      '--set',
      'eval.tasks=64',
    ]);

    writeRun(project, 'drmas-seed0', { avg: 0.3, pass: 0.6, gradNorms: [1, 1, 1] });
    writeRun(project, 'drmas-seed1', { avg: 0.3, pass: 0.6, gradNorms: [1, 1, 1], finished: false });
    writeRun(project, 'drmas-seed2', { avg: 0.3, pass: 0.6, gradNorms: [1, 1, 1] });
    project.write({
      [`drmas-seed2/${GRID_RUN_FILE}`]: { args: ['train', '--config', 'other.json'], status: 'finished', wallSeconds: 100 },
    });
    project.write({ 'base-math-seed0/eval.jsonl': JSON.stringify({ step: 0, 'val/avg@16': 0.21, 'val/pass@16': 0.59 }) });
    const run = (variant: string, seed: number) => runs.find((r) => r.variant === variant && r.seed === seed)!;
    const state = (variant: string, seed: number) => runState(run(variant, seed));
    // Interrupted: started by the grid with these arguments and stopped after a checkpoint. Without the grid's record,
    // or without a checkpoint, a run starts over; a base (an evaluation) always does.
    project.write({
      [`grpo-seed1/${GRID_RUN_FILE}`]: { args: run('grpo', 1).args, status: 'running' },
      'grpo-seed1/checkpoints/step-000010/trainer_state.json': {},
      [`grpo-seed2/${GRID_RUN_FILE}`]: { args: ['train', '--config', 'other.json'], status: 'failed' },
      'grpo-seed2/checkpoints/step-000010/trainer_state.json': {},
      'rae-seed0/checkpoints/step-000010/trainer_state.json': {},
      [`rae-seed1/${GRID_RUN_FILE}`]: { args: run('rae', 1).args, status: 'failed' },
      [`base-math-seed2/${GRID_RUN_FILE}`]: { args: run('base:math', 2).args, status: 'running' },
      'base-math-seed2/checkpoints/step-000010/trainer_state.json': {},
    });
    expect([
      state('drmas', 0),
      state('drmas', 1),
      state('drmas', 2),
      state('grpo', 0),
      state('grpo', 1),
      state('grpo', 2),
      state('rae', 0),
      state('rae', 1),
      state('base:math', 0),
      state('base:math', 1),
      state('base:math', 2),
    ]).toEqual([
      'finished',
      'pending',
      'changed',
      'pending',
      'interrupted',
      'changed',
      'pending',
      'pending',
      'finished',
      'pending',
      'pending',
    ]);
    expect(readRun(run('grpo', 1))).toMatchObject({
      status: 'interrupted',
      error: 'stopped with a checkpoint at step 10: the grid resumes it',
    });
  });

  test("a training run's wall time is its steps' own timing, each once: the part of a resumed run the grid never saw end counts", () => {
    const runs = plan();
    const drmas0 = runs.find((r) => r.variant === 'drmas' && r.seed === 0)!;
    writeRun(project, 'drmas-seed0', { avg: 0.3, pass: 0.6, gradNorms: [1, 2, 3] });
    const timed = readFileSync(path.join(drmas0.runDir, 'metrics.jsonl'), 'utf8')
      .split('\n')
      .map((line, i) => JSON.stringify({ ...(JSON.parse(line) as object), 'timing/step': [30, 40.5, 900][i] }))
      .join('\n');
    // The grid saw only the part after the resume end: 120 s.
    project.write({
      'drmas-seed0/metrics.jsonl': timed,
      [`drmas-seed0/${GRID_RUN_FILE}`]: { args: drmas0.args, status: 'finished', wallSeconds: 120, resumes: 1 },
    });
    expect(readRun(drmas0).wallSeconds).toBe(970.5);
    // A run whose steps carry no timing keeps the grid's clock.
    project.write({
      'drmas-seed0/metrics.jsonl': readFileSync(path.join(drmas0.runDir, 'metrics.jsonl'), 'utf8').replace(/,"timing\/step":[\d.]+/g, ''),
    });
    expect(readRun(drmas0).wallSeconds).toBe(120);
  });

  test('a run another live process writes (its run lock) is left to it: not cleared, not resumed, reported running', async () => {
    const runs = plan();
    const grpo1 = runs.find((r) => r.variant === 'grpo' && r.seed === 1)!;
    // This test's own process stands for the `drmas train` of another grid: alive for as long as the test runs.
    const lock = { pid: process.pid, host: os.hostname(), startedAt: 'then', command: 'drmas train', id: 'other-grid' };
    project.write({
      [`grpo-seed1/${GRID_RUN_FILE}`]: { args: grpo1.args, status: 'running' },
      'grpo-seed1/checkpoints/step-000010/trainer_state.json': {},
      'grpo-seed1/metrics.jsonl': '{"step":1}\n',
      [`grpo-seed1/${RUN_LOCK_FILE}`]: lock,
    });
    expect(runState(grpo1)).toBe('running');
    expect(readRun(grpo1)).toMatchObject({
      status: 'running',
      error: `running in process ${process.pid} since then (checkpoint at step 10)`,
    });
    const log: string[] = [];
    await runGrid([grpo1], { log: (line) => log.push(line) });
    expect(log).toEqual([`0 finished runs reused, 0 to run, 1 at a time; 1 running in another process, left to it (${grpo1.runDir})`]);
    expect(readFileSync(path.join(grpo1.runDir, 'metrics.jsonl'), 'utf8')).toBe('{"step":1}\n');
    expect(JSON.parse(readFileSync(path.join(grpo1.runDir, GRID_RUN_FILE), 'utf8'))).toEqual({ args: grpo1.args, status: 'running' });
    // Once that process is gone (its lock stale), the run is the grid's again: interrupted, with its checkpoint.
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    project.write({ [`grpo-seed1/${RUN_LOCK_FILE}`]: { ...lock, pid: dead } });
    expect(runState(grpo1)).toBe('interrupted');
  });

  test('a run another process claims after the grid planned it (a grid started beside this one) is left to it, not cleared', async () => {
    const runs = plan();
    const grpo1 = runs.find((r) => r.variant === 'grpo' && r.seed === 1)!;
    project.write({ 'grpo-seed1/metrics.jsonl': '{"step":1}\n' });
    expect(runState(grpo1)).toBe('pending');
    const lock = { pid: process.pid, host: os.hostname(), startedAt: 'just now', command: 'drmas train', id: 'beside' };
    const log: string[] = [];
    await runGrid([grpo1], {
      log: (line) => {
        log.push(line);
        // The grid has planned the run and is about to start it: another process claims the folder first.
        if (line.startsWith('[1] ')) project.write({ [`grpo-seed1/${RUN_LOCK_FILE}`]: lock });
      },
    });
    expect(log[2]).toBe(`grpo seed 1: left to process ${process.pid}, which started writing ${grpo1.runDir} at just now`);
    expect(readdirSync(grpo1.runDir).sort()).toEqual(['metrics.jsonl', RUN_LOCK_FILE]);
    expect(JSON.parse(readFileSync(path.join(grpo1.runDir, RUN_LOCK_FILE), 'utf8'))).toEqual(lock);
  });

  test('a run another grid finishes after this grid planned it is reused as it is: not cleared, not run again', async () => {
    const base0 = plan().find((r) => r.kind === 'base' && r.seed === 0)!;
    expect(runState(base0)).toBe('pending');
    const finished = {
      'base-math-seed0/eval.jsonl': JSON.stringify({ step: 0, 'val/avg@16': 0.21, 'val/pass@16': 0.59 }),
      [`base-math-seed0/${GRID_RUN_FILE}`]: { args: base0.args, status: 'finished', wallSeconds: 60 },
    };
    const log: string[] = [];
    const finishedHere: string[] = [];
    await runGrid([base0], {
      onFinished: (run) => finishedHere.push(run.runDir),
      log: (line) => {
        log.push(line);
        if (line.startsWith('[1] ')) project.write(finished);
      },
    });
    expect(log.slice(2)).toEqual(['base:math seed 0: finished by another process since this grid planned it; left as it is']);
    expect(finishedHere).toEqual([]);
    expect(readdirSync(base0.runDir).sort()).toEqual(['eval.jsonl', GRID_RUN_FILE]);
    expect(JSON.parse(readFileSync(path.join(base0.runDir, GRID_RUN_FILE), 'utf8'))).toEqual({
      args: base0.args,
      status: 'finished',
      wallSeconds: 60,
    });
  });

  test('a run another grid stopped after a checkpoint since this grid planned it resumes from there, not from scratch', async () => {
    // grpo's config is missing, so the real CLI fails at once: what counts is that it was asked to resume.
    const grpo1 = plan().find((r) => r.variant === 'grpo' && r.seed === 1)!;
    expect(runState(grpo1)).toBe('pending');
    const log: string[] = [];
    await runGrid([grpo1], {
      log: (line) => {
        log.push(line);
        if (line.startsWith('[1] ')) {
          project.write({
            [`grpo-seed1/${GRID_RUN_FILE}`]: { args: grpo1.args, status: 'running', wallSeconds: 30, resumes: 0 },
            'grpo-seed1/checkpoints/step-000010/trainer_state.json': {},
          });
        }
      },
    });
    expect(log[2]).toBe('grpo seed 1: stopped with a checkpoint by another process since this grid planned it; resumes');
    expect(existsSync(path.join(grpo1.runDir, 'checkpoints/step-000010/trainer_state.json'))).toBe(true);
    expect(log[3]).toMatch(/^grpo seed 1: failed in \d+ s \(resumed 1x\) \(/);
    expect(JSON.parse(readFileSync(path.join(grpo1.runDir, GRID_RUN_FILE), 'utf8'))).toMatchObject({ status: 'failed', resumes: 1 });
  });

  test("settings with their own configs: variants train on the setting's config, a base without one is evaluated on it", () => {
    const runs = planGrid({
      variants: [
        { name: 'drmas', set: ['algorithm.advantage=drmas'], base: 'base' },
        { name: 'grpo', set: ['algorithm.advantage=grpo'], base: 'base' },
      ],
      settings: [
        { name: 'math.shared', config: 'examples/drmas-vs-grpo/math.shared.json' },
        { name: 'math.non-shared', config: 'examples/drmas-vs-grpo/math.non-shared.json' },
      ],
      bases: { base: {} },
      seeds: [0],
      out: project.dir,
    });
    expect(runs.map((r) => [path.basename(r.runDir), r.args[0], r.args[2]])).toEqual([
      ['math.shared-drmas-seed0', 'train', 'examples/drmas-vs-grpo/math.shared.json'],
      ['math.shared-grpo-seed0', 'train', 'examples/drmas-vs-grpo/math.shared.json'],
      ['math.shared-base-base-seed0', 'eval', 'examples/drmas-vs-grpo/math.shared.json'],
      ['math.non-shared-drmas-seed0', 'train', 'examples/drmas-vs-grpo/math.non-shared.json'],
      ['math.non-shared-grpo-seed0', 'train', 'examples/drmas-vs-grpo/math.non-shared.json'],
      ['math.non-shared-base-base-seed0', 'eval', 'examples/drmas-vs-grpo/math.non-shared.json'],
    ]);
  });

  test('a run recorded with other arguments stops the grid before anything trains', async () => {
    const runs = plan();
    writeRun(project, 'drmas-seed2', { avg: 0.3, pass: 0.6, gradNorms: [1, 1, 1] });
    project.write({ [`drmas-seed2/${GRID_RUN_FILE}`]: { args: ['train'], status: 'finished' } });
    await expect(runGrid(runs, { log: () => {} })).rejects.toThrow(/drmas-seed2 ran with other arguments/);
  });

  test('reuses finished runs, runs a failing one through the real CLI and reports it failed with its error', async () => {
    const runs = plan();
    for (const seed of [0, 1, 2]) writeRun(project, `drmas-seed${seed}`, { avg: 0.3, pass: 0.6, gradNorms: [1, 1, 1] });
    const lines: string[] = [];
    const finished: GridRun[] = [];
    await runGrid(runs, {
      only: (r) => r.variant !== 'rae' && !(r.variant === 'grpo' && r.seed > 0) && r.kind === 'train',
      log: (l) => lines.push(l),
      onFinished: (run) => finished.push(run),
    });
    expect(lines[0]).toBe('3 finished runs reused, 1 to run, 1 at a time');
    expect(finished).toEqual([]);
    const failed = readRun(runs.find((r) => r.variant === 'grpo' && r.seed === 0)!);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/^error CONFIG_NOT_FOUND .*missing\.json/);
    expect(readRun(runs.find((r) => r.variant === 'grpo' && r.seed === 1)!).status).toBe('not run');
    const recorded = JSON.parse(readFileSync(path.join(project.dir, 'grpo-seed0', GRID_RUN_FILE), 'utf8')) as { args: string[] };
    expect(recorded.args).toEqual(runs.find((r) => r.variant === 'grpo' && r.seed === 0)!.args);
  });

  test('an interrupted run resumes from its checkpoint through the real CLI and ends exactly where the uninterrupted run ended', async () => {
    const runs = planGrid({
      variants: [{ name: 'drmas', config: 'examples/marl/drmas.config.json' }],
      seeds: [3],
      set: [
        'trainer.steps=2',
        'trainer.saveEvery=1',
        'trainer.keepLast=2',
        'rollout.promptsPerStep=2',
        'rollout.samplesPerPrompt=2',
        'eval.tasks=4',
        'eval.k=2',
      ],
      out: project.dir,
    });
    const dir = path.join(project.dir, 'drmas-seed3');
    const lines = (file: string) =>
      readFileSync(path.join(dir, file), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, number>);
    // Timings differ between two runs of the same steps; every other figure must not.
    const figures = (records: Array<Record<string, number>>) =>
      records.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !/^(timing|perf)\//.test(k) && !k.endsWith('/seconds'))));
    await runGrid(runs, { log: () => {} });
    expect(readRun(runs[0]!).status).toBe('finished');
    const whole = { metrics: figures(lines('metrics.jsonl')), eval: figures(lines('eval.jsonl')) };
    expect(whole.metrics.map((m) => m.step)).toEqual([1, 2]);

    // As the grid leaves a run killed during step 2: the grid's record says running, no checkpoint or evaluation of step 2.
    rmSync(path.join(dir, 'checkpoints', 'step-000002'), { recursive: true });
    rmSync(path.join(dir, 'eval.jsonl'));
    project.write({ [`drmas-seed3/${GRID_RUN_FILE}`]: { args: runs[0]!.args, status: 'running', wallSeconds: 100, resumes: 0 } });
    expect(runState(runs[0]!)).toBe('interrupted');
    const log: string[] = [];
    const finished: GridRun[] = [];
    await runGrid(runs, { log: (l) => log.push(l), onFinished: (run) => finished.push(run) });
    expect(finished).toEqual([runs[0]]);
    expect(log[0]).toBe('0 finished runs reused, 1 to run (1 resuming from a checkpoint), 1 at a time');
    expect(log[1]).toMatch(/^\[1\] drmas seed 3 \(resumes\): /);
    expect(readFileSync(path.join(dir, 'grid.log'), 'utf8')).toMatch(
      /--- resumed by the grid: train .* --resume auto\n[^]*resuming after step 1 from/,
    );
    const record = JSON.parse(readFileSync(path.join(dir, GRID_RUN_FILE), 'utf8')) as {
      status: string;
      resumes: number;
      wallSeconds: number;
    };
    expect(record).toMatchObject({ status: 'finished', resumes: 1 });
    expect(record.wallSeconds).toBeGreaterThan(100);
    expect(existsSync(path.join(dir, 'checkpoints', 'step-000002'))).toBe(true);
    expect({ metrics: figures(lines('metrics.jsonl')), eval: figures(lines('eval.jsonl')) }).toEqual(whole);
  }, 120_000);

  test('an archive carries finished runs to a grid whose directories are gone: reused with their figures, never rerun', async () => {
    // Session 1: two finished runs under one --out, archived.
    const first = plan();
    writeRun(project, 'drmas-seed0', { avg: 0.3, pass: 0.6, gradNorms: [1, 2, 3], agents: true });
    project.write({ 'base-math-seed0/eval.jsonl': JSON.stringify({ step: 0, 'val/avg@16': 0.21, 'val/pass@16': 0.59 }) });
    for (const [dir, variant] of [
      ['drmas-seed0', 'drmas'],
      ['base-math-seed0', 'base:math'],
    ] as const) {
      const args = first.find((r) => r.variant === variant && r.seed === 0)!.args;
      project.write({ [`${dir}/${GRID_RUN_FILE}`]: { args, status: 'finished', wallSeconds: 120 } });
    }
    const archiveFile = path.join(project.dir, 'archive', 'runs.json');
    const empty = readArchive(archiveFile);
    expect(empty.size).toBe(0);
    writeArchive(
      archiveFile,
      empty,
      first,
      first.map((run) => readRun(run, { archive: empty })),
    );
    const archived = JSON.parse(readFileSync(archiveFile, 'utf8')) as { runs: Array<{ args: string[]; result: { runDir: string } }> };
    expect(archived.runs.map((entry) => entry.result.runDir)).toEqual(['base-math-seed0', 'drmas-seed0']);

    // Session 2: a fresh checkout, another --out; the archived runs count as finished with the figures they had.
    const out = path.join(project.dir, 'elsewhere');
    const second = planGrid({ ...planOptions(), out });
    const archive = readArchive(archiveFile);
    const drmas0 = second.find((r) => r.variant === 'drmas' && r.seed === 0)!;
    expect(runState(drmas0, { archive })).toBe('archived');
    expect(runState(drmas0)).toBe('pending');
    const reused = readRun(drmas0, { archive });
    expect(reused).toMatchObject({
      status: 'finished',
      archived: true,
      avg: 0.3,
      pass: 0.6,
      runDir: drmas0.runDir,
      gradNorm: { policy: { max: 3, steps: 3 } },
      agents: { solver: { gradNorm: { max: 1.5 } } },
    });
    expect(reused.agents!.solver!.means.reward_std).toBeCloseTo(0.3, 12);
    const lines: string[] = [];
    await runGrid(second, {
      archive,
      only: (r) => (r.variant === 'drmas' || r.kind === 'base') && r.seed === 0,
      log: (l) => lines.push(l),
    });
    expect(lines).toEqual(['2 finished runs reused (2 from the archive), 0 to run, 1 at a time']);
    expect(existsSync(path.join(out, 'drmas-seed0'))).toBe(false);
    const tables = renderTables(
      second.map((run) => readRun(run, { archive })),
      { reference: 'drmas', variants: ['drmas', 'grpo', 'rae'] },
    );
    expect(tables.runs).toContain('| drmas-seed0 | finished (archive) | 2.0 min | 30.0 | 60.0 |  |');

    // A run of another command under the same name stops the grid, as a changed directory does.
    const other = planGrid({ ...planOptions(), set: ['eval.tasks=32'], out });
    expect(
      runState(
        other.find((r) => r.variant === 'drmas' && r.seed === 0)!,
        { archive },
      ),
    ).toBe('changed');
    await expect(runGrid(other, { archive, log: () => {} })).rejects.toThrow(
      /drmas-seed0, .*base-math-seed0 ran with other arguments than this grid.s \(in its directory or the archive\)/,
    );

    // Meanwhile a grid on other seeds, started from the same file, archived a run of its own.
    const rae2 = first.find((r) => r.variant === 'rae' && r.seed === 2)!;
    writeRun(project, 'rae-seed2', { avg: 0.1, pass: 0.2, gradNorms: [1] });
    writeArchive(archiveFile, readArchive(archiveFile), [rae2], [readRun(rae2)]);
    // A run finished here is added, the archived ones stay, and so does the other grid's.
    writeRun(project, 'elsewhere/drmas-seed1', { avg: 0.4, pass: 0.7, gradNorms: [1] });
    writeArchive(
      archiveFile,
      archive,
      second,
      second.map((run) => readRun(run, { archive })),
    );
    expect(
      [...readArchive(archiveFile).values()].map((entry) => [entry.result.runDir, entry.result.avg, entry.args.includes('trainer.seed=1')]),
    ).toEqual([
      ['base-math-seed0', 0.21, false],
      ['drmas-seed0', 0.3, false],
      ['drmas-seed1', 0.4, true],
      ['rae-seed2', 0.1, false],
    ]);

    writeFileSync(archiveFile, '{"runs": [{"args": []}]}');
    expect(() => readArchive(archiveFile)).toThrow(
      /runs\.json: not an archive of grid runs \(each entry holds a finished run's args and result\)/,
    );
  });

  test('a run recorded over another text of its config file is another run, in its directory and in the archive', () => {
    project.write({ 'c.json': { presets: ['math'] } });
    const config = path.join(project.dir, 'c.json');
    const [run] = planGrid({ variants: [{ name: 'drmas', config }], seeds: [0], out: project.dir });
    const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);
    writeRun(project, 'drmas-seed0', { avg: 0.3, pass: 0.6, gradNorms: [1] });
    project.write({
      [`drmas-seed0/${GRID_RUN_FILE}`]: { args: run!.args, config: digest(readFileSync(config, 'utf8')), status: 'finished' },
    });
    expect(runState(run!)).toBe('finished');
    const archiveFile = path.join(project.dir, 'runs.json');
    writeArchive(archiveFile, readArchive(archiveFile), [run!], [readRun(run!)]);
    expect([...readArchive(archiveFile).values()][0]!.config).toBe(digest(readFileSync(config, 'utf8')));
    rmSync(path.join(project.dir, 'drmas-seed0'), { recursive: true });
    expect(runState(run!, { archive: readArchive(archiveFile) })).toBe('archived');

    writeFileSync(config, JSON.stringify({ presets: ['math'], trainer: { steps: 2 } }));
    expect(runState(run!, { archive: readArchive(archiveFile) })).toBe('changed');
    writeRun(project, 'drmas-seed0', { avg: 0.3, pass: 0.6, gradNorms: [1] });
    project.write({ [`drmas-seed0/${GRID_RUN_FILE}`]: { args: run!.args, config: 'a record of the old text', status: 'finished' } });
    expect(runState(run!)).toBe('changed');
  });

  test("a seed where an agent's norm was never nonzero is left out of that agent's mean p99 and max, named, read from an archive too", () => {
    const runs = plan().filter((r) => r.variant === 'drmas' && r.seed < 2);
    writeRun(project, 'drmas-seed0', { avg: 0.2, pass: 0.5, gradNorms: [1, 1, 1, 1, 6], agents: true });
    writeRun(project, 'drmas-seed1', { avg: 0.2, pass: 0.5, gradNorms: [0, 0, 0], agents: true });
    const cells = (results: ReturnType<typeof readRun>[]) =>
      renderTables(results, { reference: 'drmas', variants: ['drmas'] })
        .gradNorms.split('\n')
        .find((l) => l.startsWith('| drmas | agent solver |'));
    // Seed 0's solver norms are 0.5, 0.5, 0.5, 0.5, 3 (p99 and max 3); seed 1's are all 0: no statistic.
    const expected = '| drmas | agent solver | 3.000 (1 of 2 seeds) | 3.000 (1 of 2 seeds) | 1 |';
    expect(cells(runs.map((run) => readRun(run)))).toMatch(new RegExp(`^${expected.replace(/[|()]/g, '\\$&')}`));
    const archiveFile = path.join(project.dir, 'archive.json');
    writeArchive(
      archiveFile,
      new Map(),
      runs,
      runs.map((run) => readRun(run)),
    );
    for (const run of runs) rmSync(run.runDir, { recursive: true });
    const archive = readArchive(archiveFile);
    expect(cells(runs.map((run) => readRun(run, { archive })))).toMatch(new RegExp(`^${expected.replace(/[|()]/g, '\\$&')}`));
  });

  test('the tables: paired differences against the reference, bases first, per-agent norms, failed and missing runs named', () => {
    const runs = plan();
    const drmas = [0.2, 0.25, 0.22];
    const grpo = [0.24, 0.27, 0.29];
    drmas.forEach((avg, seed) => writeRun(project, `drmas-seed${seed}`, { avg, pass: 0.5, gradNorms: [1, 1, 1, 1, 6], agents: true }));
    grpo.forEach((avg, seed) => writeRun(project, `grpo-seed${seed}`, { avg, pass: 0.625, gradNorms: [1, 2, 3] }));
    project.write({
      [`rae-seed1/${GRID_RUN_FILE}`]: { args: [], status: 'failed', wallSeconds: 12, error: 'error OUT_OF_MEMORY (x): too big' },
    });
    [0, 1].forEach((seed) =>
      project.write({ [`base-math-seed${seed}/eval.jsonl`]: JSON.stringify({ step: 0, 'val/avg@16': 0.2, 'val/pass@16': 0.5 }) }),
    );

    const results = runs.map((run) => readRun(run));
    const drmasRun = results.find((r) => r.variant === 'drmas' && r.seed === 0)!;
    expect(drmasRun.gradNorm!.policy).toEqual({ steps: 5, max: 6, p99: 6, median: 1, spikes: 1 });
    expect(drmasRun.agents!.solver!.gradNorm).toMatchObject({ median: 0.5, spikes: 1 });
    // reward_std 0.2, 0.3, 0.4, 0.5, 0.6 over the five steps: mean 0.4
    const means = drmasRun.agents!.solver!.means;
    expect(Object.keys(means).sort()).toEqual(['grad_norm', 'reward_mean', 'reward_std']);
    // agent grad_norm 0.5, 0.5, 0.5, 0.5, 3: mean 1
    expect(means.grad_norm).toBeCloseTo(1, 12);
    expect(means.reward_mean).toBeCloseTo(0.1, 12);
    expect(means.reward_std).toBeCloseTo(0.4, 12);

    const tables = renderTables(results, { reference: 'drmas', variants: ['drmas', 'grpo', 'rae'] });
    const row = (name: string) => tables.main.split('\n').find((l) => l.startsWith(`| ${name} |`))!;
    // grpo - drmas per seed: 0.04, 0.02, 0.07 (the hand-worked t-test above): +4.3 points, p 0.096
    expect(row('grpo')).toContain('| +4.3 (p 0.096, n 3) |');
    expect(row('grpo')).toContain('| 26.7 ± 2.5 | [20.4, 32.9] |');
    // pass@16 0.625 against 0.5 at every seed: the same difference three times, t infinite, no p-value worth printing.
    expect(row('grpo')).toContain('| +12.5 (no spread to test, n 3) |');
    expect(row('base:math')).toMatch(/^\| base:math \| step 0 \| 2 of 3 \| 20\.0 ± 0\.0 .*\| seed 2 not run \|$/);
    expect(row('rae')).toBe('| rae | - | 0 of 3 | - | - | - | - | - | - | - | seed 1 failed; seeds 0, 2 not run |');
    expect(tables.main.indexOf('| base:math')).toBeLessThan(tables.main.indexOf('| drmas'));
    expect(tables.gradNorms).toContain('| drmas | group policy | 6.000 | 6.000 | 3 | - | - | - | - |');
    expect(tables.gradNorms).toContain('| drmas | agent solver | 3.000 | 3.000 | 3 | 0.100 | 0.400 | - | - |');
    expect(tables.gradNorms).not.toContain('| grpo | agent');
    expect(tables.runs).toContain('| rae-seed1 | failed | 0.2 min | - | - | error OUT_OF_MEMORY (x): too big |');
    expect(tables.runs).not.toContain('rae-seed0');
  });
});
