import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TrainingBatch, type BatchView, type OptimizerSettings, type UpdateRequest } from '@drmas/core';
import { builtinTokenizer, readModelShape, SeededRandom } from '@drmas/models';
import { policyLoss } from '../../backend-onnx/test/parityFixtures.js';
import { TinkerClient, type TinkerClientOptions } from '../src/client/TinkerClient.js';
import { TINKER_SERVER_TRAITS, type TinkerServerTraits } from '../src/client/tinkerServers.js';
import { DEFAULT_FUTURE_POLICY, type FuturePolicy } from '../src/server/FutureQueue.js';
import { openLocalEngines } from '../src/server/localEngines.js';
import { TinkerServer } from '../src/server/TinkerServer.js';
import { TrainingModels } from '../src/server/TrainingModels.js';
import { TinkerPolicyBackend } from '../src/TinkerPolicyBackend.js';

/** The seed both the server's base model and the local reference engine are initialised from. */
export const SEED = 3;

/** A `drmas tinker-server` in this process (real HTTP over loopback) on the onnx engine, tiny base model. */
export async function startServer(
  policy: Partial<FuturePolicy> = {},
  sessionTimeoutMs?: number,
): Promise<{ server: TinkerServer; url: string; dataDir: string }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'drmas-tinker-test-'));
  const engines = await openLocalEngines({ cwd: process.cwd(), engine: 'onnx', seed: SEED, log: () => undefined, dataDir });
  const server = new TinkerServer(new TrainingModels(engines.open, dataDir, ['tiny']), {
    host: '127.0.0.1',
    port: 0,
    policy: { ...DEFAULT_FUTURE_POLICY, holdMs: 20, ...policy },
    sessionTimeoutMs,
  });
  return { server, url: await server.start(), dataDir };
}

export function client(url: string, options: Partial<TinkerClientOptions> = {}): TinkerClient {
  return new TinkerClient({
    baseUrl: url,
    timeoutMs: 10_000,
    pollTimeoutMs: 10_000,
    heartbeatMs: 10_000,
    retries: 2,
    retryDelayMs: 20,
    futureTimeoutMs: 30_000,
    pollIntervalMs: 5,
    resubmits: 1,
    key: 'models.policy.tinker',
    ...options,
  });
}

/** A backend on `drmas tinker-server` (or speaking to it as `server` would be spoken to). */
export function tinkerBackend(
  tinker: TinkerClient,
  server: TinkerServerTraits = TINKER_SERVER_TRAITS.drmas,
  loraRank = 8,
): Promise<TinkerPolicyBackend> {
  const shape = readModelShape('tiny')!;
  return TinkerPolicyBackend.create({
    name: 'tinker:policy',
    client: tinker,
    server,
    log: () => undefined,
    baseModel: 'tiny',
    loraRank,
    tokenizer: builtinTokenizer(shape.vocabSize),
    vocabSize: shape.vocabSize,
    key: 'models.policy.tinker',
  });
}

export const LOSS = policyLoss();

/** Fixed sequences; each step draws its own old log-probs and advantages. */
export function stepView(step: number): BatchView {
  const batch = TrainingBatch.fromSequences(
    [[3, 7, 1, 9], [8], [30, 4, 11]],
    [
      [12, 5, 20, 2, 9],
      [30, 4, 11],
      [6, 9, 1, 1],
    ],
  );
  const rng = new SeededRandom(100 + step);
  batch.oldLogProbs = Float32Array.from(batch.responseMask, (m) => (m ? -6 + (rng.uniform() - 0.5) * 0.2 : 0));
  batch.responseMask.forEach((m, i) => (batch.advantages[i] = m ? rng.uniform() * 2 - 1 : 0));
  return batch.all();
}

/** One update of `view` in two micro-batches, with `optimizer` (AdamW; clipping per its maxGradNorm). */
export function updateRequest(view: BatchView, optimizer: Partial<OptimizerSettings> = {}): UpdateRequest {
  let tokens = 0;
  view.batch.responseMask.forEach((m) => (tokens += m));
  return {
    batch: view,
    totals: { tokens, rows: view.rows.length, responseLength: view.batch.responseLength, microBatches: 2 },
    loss: LOSS,
    microBatchSize: 2,
    optimizer: { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1, paramGroups: [], ...optimizer },
    lrScale: 1,
  };
}

/** max |a - b| over max |b|. */
export function relativeError(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < b.length; i++) {
    diff = Math.max(diff, Math.abs(a[i]! - b[i]!));
    scale = Math.max(scale, Math.abs(b[i]!));
  }
  return scale === 0 ? diff : diff / scale;
}
