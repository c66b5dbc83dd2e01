import { describe, expect, test } from '@jest/globals';
import {
  estimateEta,
  formatDuration,
  formatProgressBar,
  formatProgressLine,
  formatSummaryTable,
  ProgressReporter,
  progressBar,
  summarizeMetrics,
  type ProgressStream,
} from '../src/index.js';
import { metricLines } from './fixtures.js';

function fakeStream(isTTY: boolean, columns = 100): ProgressStream & { output: string } {
  return {
    isTTY,
    columns,
    output: '',
    write(chunk: string) {
      this.output += chunk;
      return true;
    },
  };
}

function fakeClock() {
  const clock = { t: 0, now: () => clock.t };
  return clock;
}

describe('formatting', () => {
  test('durations', () => {
    expect(formatDuration(undefined)).toBe('--');
    expect(formatDuration(4_400)).toBe('4s');
    expect(formatDuration(185_000)).toBe('3m05s');
    expect(formatDuration(3_720_000)).toBe('1h02m');
    expect(formatDuration(2 * 86_400_000 + 3 * 3_600_000)).toBe('2d03h');
  });

  test('ETA is the median step time times the steps left', () => {
    // the slow first step (warm-up) does not skew it
    expect(estimateEta([30_000, 2_000, 3_000, 2_500], 10)).toBe(27_500);
    expect(estimateEta([], 10)).toBeUndefined();
    expect(estimateEta([1000], 0)).toBe(0);
  });

  test('bar cells', () => {
    expect(progressBar(0, 8)).toBe('        ');
    expect(progressBar(0.5, 8)).toBe('████    ');
    expect(progressBar(1, 8)).toBe('████████');
    expect(progressBar(1 / 16, 4)).toBe('▎   ');
    expect(progressBar(Number.NaN, 3)).toBe('   ');
  });

  test('the bar line fits the terminal and carries step, outcome, elapsed and ETA', () => {
    const state = { step: 25, total: 100, outcome: 0.53214, elapsedMs: 62_000, etaMs: 450_000 };
    const line = formatProgressBar(state, 100);
    expect(line).toBe(`step  25/100 │${progressBar(0.25, 35)}│  25% · outcome 0.532 · elapsed 1m02s · ETA 7m30s`);
    expect(line.length).toBe(99);
    const narrow = formatProgressBar(state, 70);
    expect(narrow.length).toBeLessThanOrEqual(69);
    expect(narrow).toContain('ETA 7m30s');
    expect(formatProgressBar(state, 30).length).toBeLessThanOrEqual(29);
  });

  test('the plain line', () => {
    expect(formatProgressLine({ step: 3, total: 10, elapsedMs: 9_000, etaMs: 21_000, outcome: 1 })).toBe(
      'step 3/10 (30%) | outcome/mean 1.000 | elapsed 9s | ETA 21s',
    );
    expect(formatProgressLine({ step: 3, total: 10, elapsedMs: 0 })).toBe('step 3/10 (30%) | elapsed 0s | ETA --');
  });
});

describe('ProgressReporter', () => {
  test('on a TTY it redraws one line with \\r and ends it at finish', () => {
    const stream = fakeStream(true, 90);
    const clock = fakeClock();
    const progress = new ProgressReporter({ total: 4, stream, now: clock.now });
    expect(progress.mode).toBe('bar');
    progress.start();
    for (let step = 1; step <= 4; step++) {
      clock.t += step === 1 ? 10_000 : 2_000;
      const state = progress.update(step, { 'outcome/mean': step / 4, 'reward/mean': -1 });
      if (step === 2) expect(state.etaMs).toBe(2 * 6_000);
    }
    progress.finish();
    const frames = stream.output.split('\r').filter(Boolean);
    expect(frames).toHaveLength(4);
    /* eslint-disable no-control-regex -- each frame ends with the ANSI erase-to-end-of-line escape ESC [ K, which these patterns check */
    expect(frames[0]).toMatch(/^step 1\/4 │.*│ {2}25% · outcome 0\.250 · elapsed 10s · ETA 30s\x1b\[K$/);
    expect(frames[3]).toMatch(/100% · outcome 1\.000 · elapsed 16s · ETA 0s\x1b\[K\n$/);
    /* eslint-enable no-control-regex */
    expect(stream.output).not.toMatch(/\n(?!$)/);
  });

  test('in a log it prints the first step, then every N steps but not more often than the minimum interval', () => {
    const stream = fakeStream(false);
    const clock = fakeClock();
    const progress = new ProgressReporter({
      total: 40,
      stream,
      now: clock.now,
      everySteps: 5,
      minIntervalMs: 10_000,
      maxIntervalMs: 60_000,
    });
    expect(progress.mode).toBe('lines');
    progress.start();
    // steps 1..20 take 1 s each: lines are spaced by the 10 s minimum, not every 5 steps
    for (let step = 1; step <= 20; step++) {
      clock.t += 1_000;
      progress.update(step);
    }
    // steps 21..30 take 11 s each: every 5 steps
    for (let step = 21; step <= 30; step++) {
      clock.t += 11_000;
      progress.update(step);
    }
    // steps 31..39 take 70 s each: the 60 s maximum silence prints every step
    for (let step = 31; step <= 39; step++) {
      clock.t += 70_000;
      progress.update(step);
    }
    clock.t += 1_000;
    progress.update(40);
    progress.finish();
    const steps = stream.output
      .trimEnd()
      .split('\n')
      .map((l) => Number(l.match(/^drmas: step (\d+)\/40/)![1]));
    expect(steps).toEqual([1, 11, 21, 26, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40]);
    expect(stream.output).not.toContain('\r');
  });

  test('finish prints the last state in a log when the run stopped early', () => {
    const stream = fakeStream(false);
    const clock = fakeClock();
    const progress = new ProgressReporter({ total: 100, stream, now: clock.now, everySteps: 50 });
    progress.start();
    for (let step = 1; step <= 3; step++) {
      clock.t += 1_000;
      progress.update(step);
    }
    progress.finish();
    expect(
      stream.output
        .trimEnd()
        .split('\n')
        .map((l) => l.match(/step (\d+)/)![1]),
    ).toEqual(['1', '3']);
  });

  test('mode off writes nothing', () => {
    const stream = fakeStream(true);
    const progress = new ProgressReporter({ total: 3, stream, mode: 'off' });
    progress.start();
    progress.update(1);
    progress.finish();
    expect(stream.output).toBe('');
  });
});

describe('summary table', () => {
  test('per worker group and overall', () => {
    const lines = metricLines();
    const stats = summarizeMetrics(lines);
    expect(stats.groups.map((g) => g.group)).toEqual(['judge', 'policy']);
    const policy = stats.groups.find((g) => g.group === 'policy')!;
    expect(policy.gradNormFinal).toBeCloseTo(10 / 6, 12);
    expect(policy.gradNormMean).toBeCloseTo(lines.reduce((a, l) => a + l['actor/policy/grad_norm']!, 0) / 6, 12);
    expect(policy.lossKey).toBe('pg_loss');
    expect(policy.lossFinal).toBeCloseTo(-0.06, 12);
    expect(stats.outcome).toEqual({ first: 0.1, last: 0.6000000000000001, best: 0.6000000000000001, bestStep: 6 });
    // reward/mean is 0.05 under the outcome at every step but the fourth, where it peaks at 0.9
    expect(stats.reward).toEqual({ first: 0.05, last: 0.6000000000000001 - 0.05, best: 0.9, bestStep: 4 });
    expect(stats.validation.map(([k]) => k)).toEqual(['val/avg@16', 'val/gsm8k/avg@16', 'val/math/avg@16', 'val/pass@16', 'val/tasks']);
    expect(stats.totalSeconds).toBeCloseTo(15.3, 9);
    expect(stats.stepsPerSecond).toBeCloseTo(6 / 15.3, 9);

    const table = formatSummaryTable(stats);
    expect(table).toContain('worker group  grad norm final  grad norm mean  loss     loss final  loss mean');
    expect(table).toMatch(/^ {2}policy +1\.667 +4\.083 +pg_loss +-0\.06 +-0\.035$/m);
    expect(table).toMatch(/^ {2}judge +0\.06 +0\.035 +pg_loss +0\.12 +0\.07$/m);
    expect(table).toMatch(/outcome\/mean +first 0\.1 · last 0\.6 · best 0\.6 \(step 6\)/);
    expect(table).toMatch(/reward\/mean +first 0\.05 · last 0\.55 · best 0\.9 \(step 4\)/);
    expect(table).toMatch(/val\/avg@16 +0\.5$/m);
    expect(table).toMatch(/total time +15s$/m);
    expect(table).toMatch(/speed +0\.3922 steps\/s$/m);
  });

  test('an explicit wall time wins; a run without groups or reward still formats', () => {
    const stats = summarizeMetrics(
      [
        { step: 1, 'actor/grad_norm': 2 },
        { step: 2, 'actor/grad_norm': Number.NaN },
      ],
      4,
    );
    expect(stats.groups).toEqual([{ group: 'actor', gradNormFinal: 2, gradNormMean: 2 }]);
    expect(stats.stepsPerSecond).toBe(0.5);
    expect(formatSummaryTable(stats)).toMatch(/speed +0\.5 steps\/s/);
    expect(formatSummaryTable(summarizeMetrics([]))).toContain('steps       0');
  });
});
