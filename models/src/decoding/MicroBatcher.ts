import type { GenerateRequest, PolicyBackend, TopLogProb } from '@drmas/core';

/** One request's sampling: what a single-row `generate` call would be given. */
export interface SampleRequest {
  promptIds: number[];
  maxNewTokens: number;
  temperature: number;
  topP: number;
  /** 0 or absent: no top-k. */
  topK?: number;
  /** Ids that end the row besides the model's own end-of-text ids (vLLM's and SGLang's `stop_token_ids`). */
  stopTokenIds?: readonly number[];
  /** Absent: the batch's own random seed (each row keyed by its position in the call). */
  seed?: number;
  stopStrings: readonly string[];
  /** How many of each step's most likely tokens to return (`top_logprobs`); 0 or absent: none. */
  topLogProbs?: number;
  /** Each new token of this request with its sampling log-prob (and the step's most likely tokens), as the engine samples it. */
  onToken?: (tokenId: number, logProb: number, top: readonly TopLogProb[]) => void;
}

export interface SampleResult {
  tokenIds: number[];
  /** The engine's sampling log-probs (at the request's temperature; temperature 1 when greedy). */
  logProbs: number[];
  finishReason: 'stop' | 'length';
  /** Per response token, its step's most likely tokens (empty lists unless `topLogProbs` asked). */
  topLogProbs: TopLogProb[][];
}

export interface MicroBatchOptions {
  /** How long the first request of a batch waits for others (ms). */
  windowMs: number;
  /** Rows per engine call at most; a full batch goes at once. */
  maxBatch: number;
}

export interface MicroBatchStats {
  /** Engine `generate` calls made. */
  generateCalls: number;
  /** Requests served through them. */
  rows: number;
  /** Rows of the largest call. */
  largestCall: number;
}

interface Pending {
  request: SampleRequest;
  resolve: (result: SampleResult) => void;
  reject: (error: unknown) => void;
}

/**
 * Collects concurrent requests to one engine for `windowMs` (or until `maxBatch` wait) and samples them in one
 * `generate` call per set of rows that share the call-wide settings (temperature, top-p, top-k, stops). One call runs
 * at a time per engine; requests arriving meanwhile form the next batch.
 *
 * A request with a seed samples exactly as `generate({ prompts: [promptIds], seed })` would: its row has that seed and
 * key 0 (`GenerateRequest.rowSeeds`, `rowKeys`), the single-row stream, whichever rows share its call.
 * Rows of one call asking for different lengths run to the longest and are cut at their own `maxNewTokens`; a row's
 * tokens do not depend on how long the call runs, so the cut equals a call of that length.
 */
export class MicroBatcher {
  readonly stats: MicroBatchStats = { generateCalls: 0, rows: 0, largestCall: 0 };
  private pending: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  /** The batch in progress (resolved when none is). */
  private current: Promise<void> = Promise.resolve();
  /** Tasks holding the engine (`exclusive`): no batch starts meanwhile. */
  private held = 0;

  constructor(
    private readonly engine: PolicyBackend,
    private readonly options: MicroBatchOptions,
  ) {}

  sample(request: SampleRequest): Promise<SampleResult> {
    return new Promise<SampleResult>((resolve, reject) => {
      this.pending.push({ request, resolve, reject });
      this.schedule();
    });
  }

  /**
   * Runs `task` with the engine to itself (a weight reload): after the batch in progress ends, before the next one
   * starts. Requests that arrive meanwhile wait and go after it, on the new weights.
   */
  async exclusive<T>(task: () => Promise<T>): Promise<T> {
    this.held++;
    try {
      await this.current;
      return await task();
    } finally {
      this.held--;
      if (this.held === 0 && this.pending.length) void this.flush();
    }
  }

  private schedule(): void {
    if (this.running || this.held) return;
    if (this.pending.length >= this.options.maxBatch) {
      void this.flush();
    } else {
      this.timer ??= setTimeout(() => void this.flush(), this.options.windowMs);
    }
  }

  private flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.running || this.held || this.pending.length === 0) return this.current;
    this.running = true;
    const batch = this.pending.splice(0, this.options.maxBatch);
    this.current = (async () => {
      try {
        for (const rows of groupByCallSettings(batch)) await this.run(rows);
      } finally {
        this.running = false;
        // Requests that came in during the call have waited long enough: they go now.
        if (this.pending.length && !this.held) void this.flush();
      }
    })();
    return this.current;
  }

  private async run(rows: Pending[]): Promise<void> {
    const first = rows[0]!.request;
    // A row with a seed draws the stream a one-row call at that seed gives (its own seed, key 0); the others draw
    // from the call's random seed, keyed by their position.
    const callSeed = Math.floor(Math.random() * 2 ** 31);
    const limits = rows.map((row) => row.request.maxNewTokens);
    const produced = rows.map(() => 0);
    const wanted = rows.map((row) => row.request.topLogProbs ?? 0);
    const tops: TopLogProb[][][] = rows.map(() => []);
    const call: GenerateRequest = {
      prompts: rows.map((row) => row.request.promptIds),
      maxNewTokens: Math.max(...limits),
      temperature: first.temperature,
      topP: first.topP,
      topK: first.topK || undefined,
      stopTokenIds: first.stopTokenIds?.length ? [...first.stopTokenIds] : undefined,
      stopStrings: first.stopStrings.length ? [...first.stopStrings] : undefined,
      seed: callSeed,
      rowSeeds: rows.map((row) => row.request.seed ?? callSeed),
      rowKeys: rows.map((row, r) => (row.request.seed === undefined ? r : 0)),
      topLogProbs: Math.max(...wanted) || undefined,
      onToken: (row, tokenId, logProb, top = []) => {
        if (produced[row]! >= limits[row]!) return;
        produced[row]!++;
        const own = top.slice(0, wanted[row]);
        tops[row]!.push(own);
        rows[row]!.request.onToken?.(tokenId, logProb, own);
      },
    };
    this.stats.generateCalls++;
    this.stats.rows += rows.length;
    this.stats.largestCall = Math.max(this.stats.largestCall, rows.length);
    let result;
    try {
      result = await this.engine.generate(call);
    } catch (error) {
      for (const row of rows) row.reject(error);
      return;
    }
    rows.forEach((row, r) => {
      const limit = limits[r]!;
      const tokenIds = result.tokenIds[r]!;
      const cut = tokenIds.length > limit;
      row.resolve({
        tokenIds: tokenIds.slice(0, limit),
        logProbs: result.logProbs[r]!.slice(0, limit),
        finishReason: cut ? 'length' : result.finishReasons[r]!,
        topLogProbs: tops[r]!,
      });
    });
  }
}

/** Rows that can share one `generate` call: the same temperature, top-p, top-k and stops (seeds are per row). */
function groupByCallSettings(batch: Pending[]): Pending[][] {
  const groups = new Map<string, Pending[]>();
  for (const entry of batch) {
    const { temperature, topP, topK, stopStrings, stopTokenIds } = entry.request;
    const key = JSON.stringify([temperature, topP, topK || 0, stopStrings, stopTokenIds ?? []]);
    const group = groups.get(key);
    if (group) group.push(entry);
    else groups.set(key, [entry]);
  }
  return [...groups.values()];
}
