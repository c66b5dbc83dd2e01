import { estimateEta, formatProgressBar, formatProgressLine, type ProgressState } from './formatProgress.js';

export type ProgressMode = 'auto' | 'bar' | 'lines' | 'off';

/** What the reporter writes to: `process.stderr` or a test double. */
export interface ProgressStream {
  write(chunk: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface ProgressReporterOptions {
  /** The last step number of the run (`trainer.steps`). */
  total: number;
  /** `auto`: a bar when the stream is a TTY, plain lines otherwise. */
  mode?: ProgressMode;
  stream?: ProgressStream;
  /** Milliseconds clock; tests pass a fake one. */
  now?: () => number;
  /** Prefix of plain lines. */
  prefix?: string;
  /** Lines mode: a line once this many steps passed since the last one (default: a twentieth of the run, at least 1)... */
  everySteps?: number;
  /** ...but not sooner than this after the last line (default 10 s)... */
  minIntervalMs?: number;
  /** ...and in any case once this long passed (default 60 s), so slow runs still show life. */
  maxIntervalMs?: number;
}

/**
 * Progress of a run on a terminal (one line redrawn with `\r`) or in a log (a plain line now and then, always for
 * the first and last step). Call `start()` when the first step begins, `update()` after each step, `finish()` at the end.
 */
export class ProgressReporter {
  readonly mode: 'bar' | 'lines' | 'off';
  private readonly stream: ProgressStream;
  private readonly now: () => number;
  private readonly everySteps: number;
  private readonly minIntervalMs: number;
  private readonly maxIntervalMs: number;
  private readonly prefix: string;
  private startedAt: number | undefined;
  private lastStepAt: number | undefined;
  private lastLineAt = Number.NEGATIVE_INFINITY;
  private lastLineStep = Number.NEGATIVE_INFINITY;
  private barDrawn = false;
  private lastState: ProgressState | undefined;
  readonly stepDurationsMs: number[] = [];

  constructor(private readonly options: ProgressReporterOptions) {
    this.stream = options.stream ?? process.stderr;
    this.now = options.now ?? (() => performance.now());
    const mode = options.mode ?? 'auto';
    this.mode = mode === 'auto' ? (this.stream.isTTY ? 'bar' : 'lines') : mode;
    this.everySteps = Math.max(1, options.everySteps ?? Math.ceil(options.total / 20));
    this.minIntervalMs = options.minIntervalMs ?? 10_000;
    this.maxIntervalMs = options.maxIntervalMs ?? 60_000;
    this.prefix = options.prefix ?? 'drmas: ';
  }

  start(): void {
    this.startedAt = this.now();
    this.lastStepAt = this.startedAt;
  }

  get elapsedMs(): number {
    return this.startedAt === undefined ? 0 : this.now() - this.startedAt;
  }

  /** The state after `step`; records the step's duration. */
  update(step: number, metrics: Readonly<Record<string, number>> = {}): ProgressState {
    if (this.startedAt === undefined) this.start();
    const at = this.now();
    this.stepDurationsMs.push(at - this.lastStepAt!);
    this.lastStepAt = at;
    const outcome = metrics['outcome/mean'];
    const state: ProgressState = {
      step,
      total: this.options.total,
      elapsedMs: at - this.startedAt!,
      etaMs: estimateEta(this.stepDurationsMs, this.options.total - step),
      ...(typeof outcome === 'number' ? { outcome } : {}),
    };
    this.lastState = state;
    if (this.mode === 'bar') this.drawBar(state);
    else if (this.mode === 'lines' && this.lineDue(step, at)) this.writeLine(state, at);
    return state;
  }

  /** Ends the bar's line (so later output starts on a fresh one); in lines mode prints the last state if unprinted. */
  finish(): void {
    if (this.mode === 'bar' && this.barDrawn) {
      this.stream.write('\n');
      this.barDrawn = false;
    } else if (this.mode === 'lines' && this.lastState && this.lastState.step !== this.lastLineStep) {
      this.writeLine(this.lastState, this.now());
    }
  }

  /** Clears the bar so a log message can be written on a clean line; the next update redraws it. */
  clear(): void {
    if (this.mode === 'bar' && this.barDrawn) {
      this.stream.write('\r\x1b[K');
      this.barDrawn = false;
    }
  }

  private lineDue(step: number, at: number): boolean {
    if (this.lastLineStep === Number.NEGATIVE_INFINITY || step >= this.options.total) return true;
    const since = at - this.lastLineAt;
    if (since < this.minIntervalMs) return false;
    return step - this.lastLineStep >= this.everySteps || since >= this.maxIntervalMs;
  }

  private writeLine(state: ProgressState, at: number): void {
    this.stream.write(`${this.prefix}${formatProgressLine(state)}\n`);
    this.lastLineAt = at;
    this.lastLineStep = state.step;
  }

  private drawBar(state: ProgressState): void {
    this.stream.write(`\r${formatProgressBar(state, this.stream.columns ?? 80)}\x1b[K`);
    this.barDrawn = true;
  }
}
