import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import pLimit from 'p-limit';
import {
  DrmasError,
  type GenerateRequest,
  type GenerateResult,
  type PolicyBackend,
  type ScoreResult,
  type UpdateResult,
  type WeightTensor,
} from '@drmas/core';
import { seedForRowKey } from '@drmas/models';
import type { RemoteDialect } from './dialects.js';
import type { ServerClient } from './ServerClient.js';

export interface RemoteEngineOptions {
  modelId: string;
  dialect: RemoteDialect;
  client: ServerClient;
  /** The name the server serves the model under (vLLM's `model` field); SGLang needs none. */
  servedModel?: string;
  /** Requests in flight at once. */
  concurrency: number;
  /** Absolute folder the pushed checkpoints go under (`v<N>` each), read by the server at the same path. */
  weightsDir: string;
  vocabSize: number;
  maxPositions?: number;
  log: (message: string) => void;
}

export interface RemoteEngineStats {
  /** Rows sampled (one request each). */
  rows: number;
  /** Weight pushes the server confirmed. */
  pushes: number;
}

/**
 * A rollout engine on a vLLM or SGLang server: each prompt row is one request with the prompt as token ids and its
 * own seed, answered with the sampled ids and their log-probs, so training uses the exact tokens (never re-tokenized).
 * It only samples: the trainer's weights reach the server through `syncWeights` (a Hugging Face checkpoint saved where
 * the server reads it, loaded by its endpoint, the version read back).
 *
 * Seeds: a row of a call seeded `s` at key `k` is sent with `seedForRowKey(s, k)`, the seed whose one-row call draws
 * the stream that row draws locally; a server with drmas's sampler (the gateway) samples the local engine's tokens.
 */
export class RemoteEngine implements PolicyBackend {
  readonly name: string;
  readonly runtime: string;
  readonly tokenizer = undefined;
  readonly stats: RemoteEngineStats = { rows: 0, pushes: 0 };
  private readonly limit: ReturnType<typeof pLimit>;
  private version = -1;
  private pushedDir: string | undefined;
  /** The server's weight routes, asked for once before the first push. */
  private probed: Promise<void> | undefined;

  constructor(private readonly options: RemoteEngineOptions) {
    this.name = `${options.dialect.kind}:${options.modelId}`;
    this.runtime = `${options.dialect.kind} server at ${options.client.url}`;
    this.limit = pLimit(options.concurrency);
  }

  get vocabSize(): number {
    return this.options.vocabSize;
  }

  get maxPositions(): number | undefined {
    return this.options.maxPositions;
  }

  /** The version the server last confirmed (`<model id>-v<N>`, N counting pushes from 0), or undefined before any. */
  get weightVersion(): string | undefined {
    return this.version < 0 ? undefined : this.versionName(this.version);
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const seed = request.seed ?? Math.floor(Math.random() * 2 ** 31);
    const rows = request.prompts.map((promptIds, r) =>
      this.limit(async () => {
        const rowSeed = seedForRowKey(request.rowSeeds?.[r] ?? seed, request.rowKeys?.[r] ?? r);
        const sample = await this.options.dialect.sample(this.options.client, this.options.servedModel, {
          promptIds,
          maxNewTokens: request.maxNewTokens,
          temperature: request.temperature ?? 1,
          topP: request.topP ?? 1,
          topK: request.topK ?? 0,
          stopStrings: request.stopStrings ?? [],
          stopTokenIds: request.stopTokenIds ?? [],
          seed: rowSeed,
        });
        this.stats.rows++;
        sample.tokenIds.forEach((id, i) => request.onToken?.(r, id, sample.logProbs[i]!));
        return sample;
      }),
    );
    const samples = await Promise.all(rows);
    return {
      tokenIds: samples.map((s) => s.tokenIds),
      logProbs: samples.map((s) => s.logProbs),
      finishReasons: samples.map((s) => s.finishReason),
    };
  }

  /**
   * Pushes the trainer's weights: saved (float32, no optimizer state) as `<weightsDir>/v<N>`, loaded by the server as
   * version `<model id>-v<N>`, which the server must then report; the previous push's folder is removed.
   */
  async syncWeights(from: PolicyBackend): Promise<void> {
    if (from === this) return;
    const next = this.version + 1;
    const dir = path.join(this.options.weightsDir, `v${next}`);
    await mkdir(this.options.weightsDir, { recursive: true });
    await from.save(dir, { optimizer: false });
    await this.push(dir, next);
  }

  /** Loads a checkpoint folder the server can read (a rollout worker's published weights) as the next version. */
  async load(dir: string): Promise<void> {
    await this.push(path.resolve(dir), this.version + 1, false);
  }

  private async push(dir: string, version: number, owned = true): Promise<void> {
    this.probed ??= this.options.dialect.probe(this.options.client);
    await this.probed.catch((error: unknown) => {
      this.probed = undefined;
      throw error;
    });
    const started = performance.now();
    await this.options.dialect.pushWeights(this.options.client, dir, this.versionName(version));
    const previous = this.pushedDir;
    this.version = version;
    this.pushedDir = owned ? dir : undefined;
    this.stats.pushes++;
    if (previous) await rm(previous, { recursive: true, force: true });
    this.options.log(
      `${this.name}: weights ${this.versionName(version)} loaded by ${this.options.client.url} in ${Math.round(performance.now() - started)} ms`,
    );
  }

  private versionName(version: number): string {
    return `${this.options.modelId}-v${version}`;
  }

  private samplingOnly(what: string): DrmasError {
    return new DrmasError('CONFIG_INVALID', `${this.name} samples on a server and cannot ${what}`, {
      key: `models.${this.options.modelId}.backend`,
      hint: 'a remote engine is a rollout engine: set models.<id>.backend to an engine that trains (onnx, tfjs) and the server under models.<id>.rollout',
    });
  }

  score(): Promise<ScoreResult> {
    return Promise.reject(this.samplingOnly('score'));
  }

  update(): Promise<UpdateResult> {
    return Promise.reject(this.samplingOnly('train'));
  }

  parameterNames(): string[] {
    return [];
  }

  save(): Promise<void> {
    return Promise.reject(this.samplingOnly('save a checkpoint'));
  }

  exportWeights(): Promise<Map<string, WeightTensor>> {
    return Promise.reject(this.samplingOnly('export its weights'));
  }

  dispose(): void {
    this.limit.clearQueue();
  }
}
