import { AlgorithmInputError } from '../errors.js';

/**
 * Unbiased pass@k from n samples of which c succeeded (Chen et al. 2021): 1 - C(n-c, k) / C(n, k), computed as a
 * product to stay exact for large n. With n = k it is 1 when any sample succeeded, else 0.
 */
export function passAtK(n: number, c: number, k: number): number {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k) || n < 1 || c < 0 || c > n || k < 1 || k > n) {
    throw new AlgorithmInputError('k', `pass@k needs integers 1 <= k <= n and 0 <= c <= n; got n=${n}, c=${c}, k=${k}`);
  }
  if (n - c < k) return 1;
  let miss = 1;
  for (let i = n - c + 1; i <= n; i++) miss *= 1 - k / i;
  return 1 - miss;
}

export interface TaskSamples {
  /** Outcomes of the task's samples; an outcome >= `threshold` counts as a success. */
  outcomes: readonly number[];
  dataSource?: string;
}

export interface SampleSummary {
  tasks: number;
  /** Mean over tasks of the mean outcome (avg@k). */
  avg: number;
  /** Mean over tasks of pass@k. */
  pass: number;
}

function summarize(tasks: readonly TaskSamples[], k: number, threshold: number): SampleSummary {
  if (tasks.length === 0) return { tasks: 0, avg: 0, pass: 0 };
  let avg = 0;
  let pass = 0;
  for (const task of tasks) {
    const n = task.outcomes.length;
    if (n < k) throw new AlgorithmInputError('outcomes', `a task has ${n} samples, fewer than k=${k}`);
    avg += task.outcomes.reduce((s, o) => s + o, 0) / n;
    pass += passAtK(n, task.outcomes.filter((o) => o >= threshold).length, k);
  }
  return { tasks: tasks.length, avg: avg / tasks.length, pass: pass / tasks.length };
}

/** avg@k and pass@k overall and per data source (tasks without one count as `default`). */
export function evaluateSamples(
  tasks: readonly TaskSamples[],
  k: number,
  options: { threshold?: number } = {},
): {
  overall: SampleSummary;
  bySource: Record<string, SampleSummary>;
} {
  const threshold = options.threshold ?? 1;
  const sources = new Map<string, TaskSamples[]>();
  for (const task of tasks) {
    const source = task.dataSource ?? 'default';
    sources.set(source, [...(sources.get(source) ?? []), task]);
  }
  return {
    overall: summarize(tasks, k, threshold),
    bySource: Object.fromEntries(
      [...sources.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([s, list]) => [s, summarize(list, k, threshold)]),
    ),
  };
}
