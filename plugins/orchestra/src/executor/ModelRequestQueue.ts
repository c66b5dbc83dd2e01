import type { GenerateRequest, PolicyBackend } from '@drmas/core';
import { rowKeyForSeed } from '@drmas/models';
import type { RowSample } from '../rollout/agentTurns.js';
import { abortReason } from './abortReason.js';

/** The sampling settings a micro-batch's rows share (one generate call has one of each). */
export type SharedSampling = Pick<GenerateRequest, 'temperature' | 'topP' | 'topK' | 'maxNewTokens' | 'stopStrings'>;

/** One row to sample: its prompt, settings, and its own random stream (seed and key). */
export interface SampleRequest {
  prompt: number[];
  sampling: SharedSampling;
  seed: number;
  rowKey: number;
  /** Aborting removes a queued request, or abandons a running one (its batch still completes). */
  signal?: AbortSignal;
}

export interface QueuedSample extends RowSample {
  /** Milliseconds between submission and the start of the batch that sampled it. */
  queueWaitMs: number;
  /** Rows of that batch. */
  batchRows: number;
}

export interface QueueOptions {
  /** Rows per generate call at most. */
  maxBatchSize: number;
  /** How long the first request of a batch waits for others before the batch goes anyway. */
  maxWaitMs: number;
  /** Generate calls in flight at once on this model. */
  concurrency: number;
}

/** What a queue did: batches, rows, and each request's wait. */
export interface QueueStats {
  batches: number;
  rows: number;
  /** Each request's queue wait in ms. */
  waits: number[];
  /** Generate calls that failed with more than one row (their rows were then sampled one at a time). */
  failedBatches: number;
}

interface Pending {
  request: SampleRequest;
  submitted: number;
  resolve: (sample: QueuedSample) => void;
  reject: (error: unknown) => void;
  settled: boolean;
  onAbort?: () => void;
}

interface Bucket {
  sampling: SharedSampling;
  items: Pending[];
  timer?: ReturnType<typeof setTimeout>;
}

/**
 * One model's request queue: agent calls of many episodes wait here and go to the model's rollout engine as
 * micro-batches of requests with the same sampling settings: a batch leaves when it holds `maxBatchSize` rows or
 * its oldest request waited `maxWaitMs`, and at most `concurrency` batches run at once (while they run, the queue
 * fills the next). Each row keeps its own random stream (`rowKeyForSeed`), so what it samples does not depend on
 * the batch it lands in.
 */
export class ModelRequestQueue {
  private readonly buckets = new Map<string, Bucket>();
  private running = 0;
  private readonly statsRef: QueueStats = { batches: 0, rows: 0, waits: [], failedBatches: 0 };

  constructor(
    private readonly backend: PolicyBackend,
    private readonly options: QueueOptions,
    private readonly now: () => number = () => performance.now(),
  ) {}

  submit(request: SampleRequest): Promise<QueuedSample> {
    return new Promise<QueuedSample>((resolve, reject) => {
      const pending: Pending = { request, submitted: this.now(), resolve, reject, settled: false };
      if (request.signal?.aborted) {
        reject(abortReason(request.signal));
        return;
      }
      const key = JSON.stringify(request.sampling);
      let bucket = this.buckets.get(key);
      if (!bucket) {
        bucket = { sampling: request.sampling, items: [] };
        this.buckets.set(key, bucket);
      }
      bucket.items.push(pending);
      if (request.signal) {
        pending.onAbort = () => this.abandon(key, pending);
        request.signal.addEventListener('abort', pending.onAbort, { once: true });
      }
      if (bucket.items.length >= this.options.maxBatchSize) this.pump();
      else this.arm(key, bucket);
    });
  }

  /** Requests waiting for a batch. */
  pending(): number {
    let count = 0;
    for (const bucket of this.buckets.values()) count += bucket.items.length;
    return count;
  }

  /** Generate calls running now. */
  inFlight(): number {
    return this.running;
  }

  stats(): QueueStats {
    return { ...this.statsRef, waits: [...this.statsRef.waits] };
  }

  private arm(key: string, bucket: Bucket): void {
    if (bucket.timer !== undefined || bucket.items.length === 0) return;
    const oldest = bucket.items[0]!.submitted;
    const delay = Math.max(0, oldest + this.options.maxWaitMs - this.now());
    bucket.timer = setTimeout(() => {
      bucket.timer = undefined;
      this.pump();
      // While every slot is busy the bucket waits for a batch to finish (which arms it again), not on a timer that
      // would fire at once, again and again.
      if (this.running < this.options.concurrency && this.buckets.get(key) === bucket) this.arm(key, bucket);
    }, delay);
  }

  private ready(bucket: Bucket): boolean {
    if (bucket.items.length >= this.options.maxBatchSize) return true;
    // Timers may fire a fraction of a millisecond before the clock shows the full wait.
    return bucket.items.length > 0 && this.now() - bucket.items[0]!.submitted >= this.options.maxWaitMs - 1;
  }

  private pump(): void {
    while (this.running < this.options.concurrency) {
      let chosen: [string, Bucket] | undefined;
      for (const entry of this.buckets) {
        if (this.ready(entry[1]) && (!chosen || entry[1].items[0]!.submitted < chosen[1].items[0]!.submitted)) chosen = entry;
      }
      if (!chosen) return;
      const [key, bucket] = chosen;
      const batch = bucket.items.splice(0, this.options.maxBatchSize);
      if (bucket.items.length === 0) {
        if (bucket.timer !== undefined) clearTimeout(bucket.timer);
        this.buckets.delete(key);
      }
      this.running++;
      void this.run(bucket.sampling, batch).finally(() => {
        this.running--;
        this.pump();
        for (const [k, b] of this.buckets) this.arm(k, b);
      });
    }
  }

  private async run(sampling: SharedSampling, batch: Pending[]): Promise<void> {
    const started = this.now();
    for (const item of batch) {
      if (item.onAbort) item.request.signal?.removeEventListener('abort', item.onAbort);
      // A request abandoned from here on is rejected at once; its row is still sampled with the batch.
      item.onAbort = () => this.settle(item, () => item.reject(abortReason(item.request.signal!)));
      item.request.signal?.addEventListener('abort', item.onAbort, { once: true });
      this.statsRef.waits.push(started - item.submitted);
    }
    try {
      await this.generate(sampling, batch, started);
    } catch (error) {
      if (batch.length === 1) {
        this.settle(batch[0]!, () => batch[0]!.reject(error));
        return;
      }
      // One row's request can fail the whole call (an empty prompt, say). Each row then runs alone, so only the rows
      // that fail on their own are rejected; a row samples the same tokens alone as in the batch (its own stream).
      this.statsRef.failedBatches++;
      for (const item of batch) {
        if (item.settled) continue;
        await this.generate(sampling, [item], started).catch((error: unknown) => this.settle(item, () => item.reject(error)));
      }
    }
  }

  /** One generate call for `batch`, settling each row with its sample; throws the engine's error. */
  private async generate(sampling: SharedSampling, batch: Pending[], started: number): Promise<void> {
    this.statsRef.batches++;
    this.statsRef.rows += batch.length;
    const callSeed = batch[0]!.request.seed;
    const result = await this.backend.generate({
      prompts: batch.map((item) => item.request.prompt),
      ...sampling,
      seed: callSeed,
      rowKeys: batch.map((item) => rowKeyForSeed(callSeed, item.request.seed, item.request.rowKey)),
    });
    if (result.tokenIds.length !== batch.length) {
      throw new Error(`backend "${this.backend.name}" returned ${result.tokenIds.length} rows for ${batch.length} prompts`);
    }
    batch.forEach((item, i) =>
      this.settle(item, () =>
        item.resolve({
          tokenIds: result.tokenIds[i]!,
          logProbs: result.logProbs[i]!,
          finishReason: result.finishReasons[i]!,
          queueWaitMs: started - item.submitted,
          batchRows: batch.length,
        }),
      ),
    );
  }

  private settle(item: Pending, action: () => void): void {
    if (item.settled) return;
    item.settled = true;
    if (item.onAbort) item.request.signal?.removeEventListener('abort', item.onAbort);
    action();
  }

  /** A queued request whose signal fired: out of its bucket, rejected with the signal's reason. */
  private abandon(key: string, item: Pending): void {
    const bucket = this.buckets.get(key);
    if (bucket) {
      const at = bucket.items.indexOf(item);
      if (at >= 0) bucket.items.splice(at, 1);
      if (bucket.items.length === 0) {
        if (bucket.timer !== undefined) clearTimeout(bucket.timer);
        this.buckets.delete(key);
      }
    }
    this.settle(item, () => item.reject(abortReason(item.request.signal!)));
  }
}
