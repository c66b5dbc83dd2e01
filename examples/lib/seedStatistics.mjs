// Statistics over seeds for the experiment grids: mean ± sd, a 95% confidence interval, a paired t-test against a
// reference, and gradient-norm summaries. The t distribution comes from jstat rather than a CDF written here.
import jstatModule from 'jstat';

const { jStat } = jstatModule;

export function mean(xs) {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Sample standard deviation (n - 1); 0 for a single value. */
export function sd(xs) {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1));
}

/**
 * Mean, sample sd and the 95% confidence interval of the mean (Student's t with n - 1 degrees of freedom) of the
 * values; the interval is null below two values, where it does not exist.
 */
export function summarize(xs) {
  const n = xs.length;
  if (n === 0) return { n, mean: NaN, sd: NaN, ci95: null };
  const m = mean(xs);
  const s = sd(xs);
  if (n < 2) return { n, mean: m, sd: s, ci95: null };
  const half = jStat.studentt.inv(0.975, n - 1) * (s / Math.sqrt(n));
  return { n, mean: m, sd: s, ci95: [m - half, m + half] };
}

/**
 * Paired t-test of `xs` against `ys` (the same seeds in the same order): the mean and sd of the differences
 * xs[i] - ys[i], t = mean / (sd / sqrt(n)) with n - 1 degrees of freedom, and the two-sided p-value. Null below two
 * pairs. Identical differences (sd 0) give t = ±Infinity and p = 0, or t = NaN and p = 1 when they are all zero.
 */
export function pairedTTest(xs, ys) {
  if (xs.length !== ys.length) throw new Error(`paired t-test: ${xs.length} values against ${ys.length}`);
  const n = xs.length;
  if (n < 2) return null;
  const diffs = xs.map((x, i) => x - ys[i]);
  const meanDiff = mean(diffs);
  const sdDiff = sd(diffs);
  const df = n - 1;
  if (sdDiff === 0) return { n, df, meanDiff, sdDiff, t: meanDiff === 0 ? NaN : Math.sign(meanDiff) * Infinity, p: meanDiff === 0 ? 1 : 0 };
  const t = meanDiff / (sdDiff / Math.sqrt(n));
  return { n, df, meanDiff, sdDiff, t, p: 2 * (1 - jStat.studentt.cdf(Math.abs(t), df)) };
}

/**
 * Gradient-norm figures of one run's per-step series: max, 99th percentile (nearest rank), median, and the spikes:
 * steps whose norm exceeds 5x the run's median. Steps with a zero norm (every group tied: nothing to learn) are left
 * out; on sparse rewards they would pull the median to 0 and make every step that learned a "spike".
 */
export function gradNormStats(series) {
  const sorted = series.filter((v) => Number.isFinite(v) && v > 0).sort((a, b) => a - b);
  if (sorted.length === 0) return { steps: 0, max: NaN, p99: NaN, median: NaN, spikes: 0 };
  const rank = (q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
  const half = sorted.length / 2;
  const median = sorted.length % 2 ? sorted[Math.floor(half)] : (sorted[half - 1] + sorted[half]) / 2;
  return { steps: sorted.length, max: sorted.at(-1), p99: rank(0.99), median, spikes: sorted.filter((v) => v > 5 * median).length };
}
