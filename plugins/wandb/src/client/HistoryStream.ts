import { historyLine, type FileStreamRequest, type ResumeStatus, type RunPath, type WandbClient } from './WandbClient.js';

export const HISTORY_FILE = 'wandb-history.jsonl';
export const SUMMARY_FILE = 'wandb-summary.json';
/** History lines per file_stream request, so that a backlog after an outage goes in requests of bounded size. */
export const MAX_LINES_PER_REQUEST = 1000;

/**
 * A run's history as W&B's file_stream takes it: each line goes at its offset in `wandb-history.jsonl`, with the summary
 * (the last value of every key) beside it. Lines are sent in the background, one request at a time, so a slow or
 * failing server never holds up training; lines a failed request carried stay pending and go again with the next
 * one, at the same offsets, so an outage loses nothing the server can still take before the run ends.
 */
export class HistoryStream {
  private offset: number;
  private readonly pending: string[] = [];
  private readonly summary: Record<string, unknown>;
  private lastStep: number | undefined;
  private sending: Promise<void> | undefined;
  private readonly started = Date.now();

  constructor(
    private readonly client: WandbClient,
    private readonly run: RunPath,
    resumed: ResumeStatus | undefined,
    private readonly onFailure: (error: Error) => void,
  ) {
    this.offset = resumed?.historyLineCount ?? 0;
    this.lastStep = resumed?.lastStep;
    this.summary = { ...resumed?.summary };
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

  /** Sends what is pending and marks the run complete with `exitcode`; resolves to the number of lines never taken. */
  async finish(exitcode: number): Promise<number> {
    await this.sending;
    try {
      while (this.pending.length > MAX_LINES_PER_REQUEST) await this.sendOnce();
      await this.sendOnce({ complete: true, exitcode });
    } catch (error) {
      this.onFailure(error as Error);
    }
    return this.pending.length;
  }

  /** Background sending: request after request while lines are pending; after a failure it waits for the next line. */
  private async drain(): Promise<void> {
    try {
      while (this.pending.length) await this.sendOnce();
    } catch (error) {
      this.onFailure(error as Error);
    } finally {
      this.sending = undefined;
    }
  }

  private async sendOnce(extra: FileStreamRequest = {}): Promise<void> {
    const lines = this.pending.slice(0, MAX_LINES_PER_REQUEST);
    const request: FileStreamRequest = { ...extra };
    if (lines.length) {
      request.files = {
        [HISTORY_FILE]: { offset: this.offset, content: lines },
        [SUMMARY_FILE]: { offset: 0, content: [historyLine(this.summary)] },
      };
    }
    await this.client.fileStream(this.run, request);
    this.offset += lines.length;
    this.pending.splice(0, lines.length);
  }
}
