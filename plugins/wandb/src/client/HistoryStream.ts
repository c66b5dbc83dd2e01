import { historyLine, type FileStreamRequest, type Patience, type ResumeStatus, type RunPath, type WandbClient } from './WandbClient.js';

export const HISTORY_FILE = 'wandb-history.jsonl';
export const SUMMARY_FILE = 'wandb-summary.json';
/** History lines per file_stream request, so that a backlog after an outage goes in requests of bounded size. */
export const MAX_LINES_PER_REQUEST = 1000;

/** The clock of a run's file_stream. */
export interface StreamTiming {
  /** An empty request goes when nothing has gone for this long (see `WANDB_TIMING`). */
  heartbeatMs: number;
  /** The last request (the remaining lines and the exit code) is tried this patiently. */
  finish: Patience;
}

/**
 * A run's history as W&B's file_stream takes it: each line goes at its offset in `wandb-history.jsonl`, with the summary
 * (the last value of every key) beside it. Lines are sent in the background, one request at a time, so a slow or
 * failing server never holds up training; lines a failed request carried stay pending and go again with the next
 * request, at the same offsets, so an outage loses nothing the server can still take before the run ends. Between
 * lines (a slow step, an evaluation) a heartbeat keeps the run alive on the server, and it also sends again what a
 * failed request left pending.
 */
export class HistoryStream {
  private offset: number;
  private readonly pending: string[] = [];
  private readonly summary: Record<string, unknown>;
  private lastStep: number | undefined;
  private sending: Promise<void> | undefined;
  private readonly started = Date.now();
  private lastRequestAt = Date.now();
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    private readonly client: WandbClient,
    private readonly run: RunPath,
    resumed: ResumeStatus | undefined,
    private readonly onFailure: (error: Error) => void,
    private readonly timing: StreamTiming,
  ) {
    this.offset = resumed?.historyLineCount ?? 0;
    this.lastStep = resumed?.lastStep;
    this.summary = { ...resumed?.summary };
    // unref: the heartbeat never keeps the process alive on its own.
    this.heartbeat = setInterval(() => this.beat(), Math.max(1, Math.floor(timing.heartbeatMs / 2))).unref();
  }

  /** Lines not yet taken by the server. */
  get unsent(): number {
    return this.pending.length;
  }

  /**
   * Queues one history line for `step`; false (and nothing queued) when the run already has a line at this step or a
   * later one, since W&B's steps only go up (its SDKs drop such a line the same way).
   */
  log(step: number, metrics: Record<string, number>): boolean {
    if (this.lastStep !== undefined && step <= this.lastStep) return false;
    this.lastStep = step;
    const now = Date.now();
    const record = { ...metrics, _step: step, _runtime: (now - this.started) / 1000, _timestamp: now / 1000 };
    Object.assign(this.summary, record);
    this.pending.push(historyLine(record));
    this.sending ??= this.drain();
    return true;
  }

  /**
   * Sends what is pending and marks the run complete with `exitcode`, tried as patiently as wandb-core tries (days; a
   * second Ctrl-C ends the wait); resolves to the number of lines never taken.
   */
  async finish(exitcode: number): Promise<number> {
    clearInterval(this.heartbeat);
    await this.sending;
    try {
      while (this.pending.length > MAX_LINES_PER_REQUEST) await this.sendOnce({}, this.timing.finish);
      await this.sendOnce({ complete: true, exitcode }, this.timing.finish);
    } catch (error) {
      this.onFailure(error as Error);
    }
    return this.pending.length;
  }

  /** Background sending: request after request while lines are pending; after a failure it waits for the next line. */
  private async drain(): Promise<void> {
    try {
      do await this.sendOnce();
      while (this.pending.length);
    } catch (error) {
      this.onFailure(error as Error);
    } finally {
      this.sending = undefined;
    }
  }

  /** A heartbeat when nothing has gone for `heartbeatMs` and nothing is in flight (with any lines left pending). */
  private beat(): void {
    if (this.sending || Date.now() - this.lastRequestAt < this.timing.heartbeatMs) return;
    this.sending = this.drain();
  }

  private async sendOnce(extra: FileStreamRequest = {}, patience?: Patience): Promise<void> {
    const lines = this.pending.slice(0, MAX_LINES_PER_REQUEST);
    const request: FileStreamRequest = { ...extra };
    if (lines.length) {
      request.files = {
        [HISTORY_FILE]: { offset: this.offset, content: lines },
        [SUMMARY_FILE]: { offset: 0, content: [historyLine(this.summary)] },
      };
    }
    this.lastRequestAt = Date.now();
    await this.client.fileStream(this.run, request, patience);
    this.lastRequestAt = Date.now();
    this.offset += lines.length;
    this.pending.splice(0, lines.length);
  }
}
