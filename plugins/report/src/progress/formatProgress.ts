/** `42s`, `3m05s`, `1h02m`, `2d03h`; `--` for an unknown duration. */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) return '--';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d${String(h % 24).padStart(2, '0')}h`;
}

export function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Remaining time from the median step time: robust to the slow first step (compilation, warm-up) and to eval steps. */
export function estimateEta(stepDurationsMs: readonly number[], remainingSteps: number): number | undefined {
  if (remainingSteps <= 0) return 0;
  const typical = median(stepDurationsMs);
  return typical === undefined ? undefined : typical * remainingSteps;
}

/** A bar of `width` cells with eighth-block resolution. */
export function progressBar(fraction: number, width: number): string {
  const f = Math.min(1, Math.max(0, Number.isFinite(fraction) ? fraction : 0));
  const eighths = Math.round(f * width * 8);
  const full = Math.floor(eighths / 8);
  const partial = eighths % 8;
  const partialChar = partial ? '▏▎▍▌▋▊▉'[partial - 1] : '';
  return '█'.repeat(full) + partialChar + ' '.repeat(Math.max(0, width - full - (partial ? 1 : 0)));
}

export interface ProgressState {
  step: number;
  total: number;
  /** `outcome/mean` of the step (the episodes' mean outcome), when there is one. */
  outcome?: number;
  elapsedMs: number;
  etaMs?: number;
}

function outcomeText(outcome: number | undefined): string | undefined {
  if (outcome === undefined) return undefined;
  if (!Number.isFinite(outcome)) return String(outcome);
  return Math.abs(outcome) >= 1000 ? outcome.toExponential(2) : outcome.toFixed(3);
}

function percent(state: ProgressState): string {
  return state.total > 0 ? `${Math.floor((100 * state.step) / state.total)}%` : '';
}

/** One redrawable line for a terminal, fitted to `columns`: the bar shrinks first, then goes. */
export function formatProgressBar(state: ProgressState, columns = 80): string {
  const width = String(state.total).length;
  const head = `step ${String(state.step).padStart(width)}/${state.total}`;
  const outcome = outcomeText(state.outcome);
  const tail = [
    percent(state).padStart(4),
    ...(outcome !== undefined ? [`outcome ${outcome}`] : []),
    `elapsed ${formatDuration(state.elapsedMs)}`,
    `ETA ${formatDuration(state.etaMs)}`,
  ].join(' · ');
  const room = columns - 1 - head.length - tail.length - 4;
  if (room < 8) return `${head} ${tail}`.slice(0, Math.max(10, columns - 1));
  const barWidth = Math.min(40, room);
  return `${head} │${progressBar(state.total > 0 ? state.step / state.total : 0, barWidth)}│ ${tail}`;
}

/** One plain line for logs (CI). */
export function formatProgressLine(state: ProgressState): string {
  const outcome = outcomeText(state.outcome);
  return [
    `step ${state.step}/${state.total} (${percent(state) || '?'})`,
    ...(outcome !== undefined ? [`outcome/mean ${outcome}`] : []),
    `elapsed ${formatDuration(state.elapsedMs)}`,
    `ETA ${formatDuration(state.etaMs)}`,
  ].join(' | ');
}
