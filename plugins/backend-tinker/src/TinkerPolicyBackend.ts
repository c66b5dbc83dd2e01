import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  DrmasError,
  lossColumnsOf,
  trainedColumns,
  type BatchView,
  type GenerateRequest,
  type GenerateResult,
  type PolicyBackend,
  type ScoreRequest,
  type ScoreResult,
  type TextCodec,
  type UpdateRequest,
  type UpdateResult,
  type WeightTensor,
} from '@drmas/core';
import type { TinkerClient } from './client/TinkerClient.js';
import { encodeForwardBackward } from './client/tinkerProto.js';
import type { TinkerServerTraits } from './client/tinkerServers.js';
import {
  modelInput,
  tensor,
  type AdamParams,
  type Datum,
  type ForwardBackwardOutput,
  type OptimStepResponse,
  type SampleResponse,
  type SamplingParams,
} from './client/tinkerWire.js';
import { logProbGradient } from './training/logProbGradient.js';

/** The file a checkpoint of a Tinker-trained model holds: where its weights live on the server. */
export const TINKER_CHECKPOINT_FILE = 'tinker.json';

export interface TinkerCheckpointPointer {
  /** The server, its user info redacted (a checkpoint folder is shared as a run's files are). */
  baseUrl: string;
  baseModel: string;
  modelId: string;
  /** `tinker://<model_id>/weights/<name>`: weights and optimizer state, as `load_weights` takes them. */
  path: string;
  samplerPath?: string;
}

export interface TinkerBackendOptions {
  /** `tinker:<model id>`. */
  name: string;
  client: TinkerClient;
  /** What the server takes (hosted Tinker, SkyRL, drmas tinker-server). */
  server: TinkerServerTraits;
  log: (message: string) => void;
  /** The model the server fine-tunes (`Qwen/Qwen3-8B`; on `drmas tinker-server`, `tiny` or a checkpoint folder). */
  baseModel: string;
  /** 0: full weights, where the server trains them (SkyRL, drmas tinker-server; hosted Tinker trains LoRA only). */
  loraRank: number;
  /** Seed of the LoRA initialisation (and, on `drmas tinker-server`, of a built-in model). */
  seed?: number;
  /** The base model's tokenizer and vocabulary, read locally (the API carries token ids only). */
  tokenizer?: TextCodec;
  vocabSize: number;
  maxPositions?: number;
  /** Where errors point (`models.policy.tinker`). */
  key: string;
}

/** Where a datum's log-probs of a row's response start: targets are the sequence shifted by one. */
function responseOffset(promptLength: number): number {
  return promptLength - 1;
}

/** The sampler weights of the current state: a `tinker://` path, or hosted Tinker's sampling session and its next seq_id. */
type Sampler = { path: string } | { sessionId: string; seq: number };

/**
 * A policy trained and sampled on a Tinker server: one Tinker model (a LoRA adapter on `baseModel`, or all its
 * weights at rank 0) per worker group, in a session of its own that heartbeats keep alive. Scoring is `forward`; an update computes drmas's loss and its gradient with respect to the log-probs on the
 * client (`logProbGradient`), sends them as per-token weights of a `cross_entropy` `forward_backward`, then
 * `optim_step` with the group's AdamW settings. Sampling goes through the server's sampler on weights saved after the
 * last update (`save_weights_for_sampler`), since the adapter never leaves the server; checkpoints hold a pointer to
 * the server's saved state (`tinker.json`).
 */
export class TinkerPolicyBackend implements PolicyBackend {
  readonly runtime: string;
  private sampler: Sampler | undefined;
  private samplerVersion = 0;
  private updates = 0;
  /**
   * The last `seq_id` sent for this model: every request on it carries the next (the SDK's `request_id + 1`, from 1;
   * `create_model` is 0). A request sent again after a lost answer keeps its seq_id, by which SkyRL main and hosted
   * Tinker know it; one resubmitted after its result expired takes a new one.
   */
  private seq = 0;

  private constructor(
    private readonly options: TinkerBackendOptions,
    readonly modelId: string,
  ) {
    const weights = options.loraRank === 0 ? 'all weights' : `LoRA rank ${options.loraRank}`;
    this.runtime = `tinker ${options.client.shownUrl} (${options.server.name}; ${options.baseModel}, ${weights}, model ${modelId})`;
  }

  /** Opens a session and creates the server-side model in it (`create_session`, `create_model`). */
  static async create(options: TinkerBackendOptions): Promise<TinkerPolicyBackend> {
    if (options.loraRank === 0 && options.server.loraOnly) throw loraOnly(options.key);
    const sessionId = await options.client.openSession(options.log);
    const future = await options.client.submit('create_model', {
      session_id: sessionId,
      // The SDK numbers a session's training clients from 0; drmas opens one session per model.
      model_seq_id: 0,
      base_model: options.baseModel,
      lora_config: { rank: options.loraRank, ...(options.seed === undefined ? {} : { seed: options.seed }) },
      type: 'create_model',
    });
    const done = await options.client.poll<{ model_id?: string }>('create_model', future.request_id, false).catch((error: unknown) => {
      options.client.close();
      throw error;
    });
    const modelId = done.value?.model_id ?? future.model_id;
    if (!modelId) {
      options.client.close();
      throw new DrmasError('SERVICE_FAILED', `Tinker ${options.client.shownUrl}/api/v1/create_model answered no model_id`, {
        key: options.key,
        hint: 'the server does not speak the Tinker API this backend follows (see the README)',
      });
    }
    return new TinkerPolicyBackend(options, modelId);
  }

  get name(): string {
    return this.options.name;
  }

  get vocabSize(): number {
    return this.options.vocabSize;
  }

  get maxPositions(): number | undefined {
    return this.options.maxPositions;
  }

  get tokenizer(): TextCodec | undefined {
    return this.options.tokenizer;
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    if (request.topLogProbs) {
      throw new DrmasError(
        'INVALID_ARGUMENT',
        `${this.name} cannot report top log-probs: Tinker's sampler returns the sampled tokens' only`,
        {
          key: this.options.key,
        },
      );
    }
    const sampler = await this.currentSampler();
    const stop = request.stopTokenIds?.length ? request.stopTokenIds : undefined;
    const rows = await Promise.all(
      request.prompts.map((prompt, row) => {
        const seed = request.rowSeeds?.[row] ?? request.seed;
        const params: SamplingParams = {
          max_tokens: request.maxNewTokens,
          temperature: request.temperature ?? 1,
          top_k: request.topK ? request.topK : -1,
          top_p: request.topP ?? 1,
          ...(stop ? { stop } : {}),
          ...(seed === undefined ? {} : { seed: rowSeed(seed, request.rowKeys?.[row] ?? row) }),
        };
        const from = () =>
          'path' in sampler ? { model_path: sampler.path } : { sampling_session_id: sampler.sessionId, seq_id: sampler.seq++ };
        return this.options.client.call<SampleResponse>(
          'asample',
          () => ({ ...from(), prompt: modelInput(prompt), sampling_params: params, num_samples: 1, type: 'sample' }),
          { idempotent: true },
        );
      }),
    );
    const result: GenerateResult = { tokenIds: [], logProbs: [], finishReasons: [] };
    rows.forEach((answer, row) => {
      const sequence = answer.sequences[0];
      if (!sequence) throw this.nonsense('asample', 'no sequence');
      let tokens = sequence.tokens;
      let finish = sequence.stop_reason;
      const cut = this.stopStringCut(tokens, request.stopStrings);
      if (cut !== undefined) {
        tokens = tokens.slice(0, cut);
        finish = 'stop';
      }
      const logProbs = (sequence.logprobs ?? []).slice(0, tokens.length);
      if (logProbs.length !== tokens.length) throw this.nonsense('asample', 'fewer log-probs than tokens (logprobs were not returned)');
      tokens.forEach((id, i) => request.onToken?.(row, id, logProbs[i]!));
      result.tokenIds.push(tokens);
      result.logProbs.push(logProbs);
      result.finishReasons.push(finish);
    });
    return result;
  }

  /**
   * `forward`'s log-probs. No entropy, even when asked: Tinker returns the given tokens' log-probs only, so the
   * `actor/entropy` metric is absent (a loss that needs the entropy is refused at its first update).
   */
  async score(request: ScoreRequest): Promise<ScoreResult> {
    const { batch, rows } = request.batch;
    const R = batch.responseLength;
    const logProbs = new Float32Array(rows.length * R);
    const answers = await this.forward(request.batch, R);
    rows.forEach((row, i) => logProbs.set(answers[i]!.subarray(0, batch.responseLengths[row]), i * R));
    return { logProbs };
  }

  async update(request: UpdateRequest): Promise<UpdateResult> {
    this.refuseUnsupported(request);
    const { batch } = request.batch;
    const rows = request.batch.rows;
    const micro = Math.max(1, Math.floor(request.microBatchSize || rows.length));
    const data: Datum[] = [];
    const metrics: Record<string, number> = {};
    let loss = 0;
    for (let start = 0; start < rows.length; start += micro) {
      const chunk = rows.subarray(start, Math.min(rows.length, start + micro));
      const cut = trainedColumns(batch, chunk);
      const { columns, take } = cut;
      const view: BatchView = { batch, rows: chunk };
      const current = await this.forward(view, columns);
      const logProbs = new Float32Array(chunk.length * columns);
      current.forEach((values, i) => logProbs.set(values.subarray(0, columns), i * columns));
      const step = await logProbGradient(
        request.loss,
        {
          rows: chunk.length,
          columns,
          logProbs,
          // With `current` the ratio divides by the forward pass's own log-probs, constants here: ratio 1.
          oldLogProbs: request.oldLogProbs === 'current' ? logProbs.slice() : take(batch.oldLogProbs ?? batch.rolloutLogProbs),
          lossColumns: Object.fromEntries(lossColumnsOf(request.loss).map((name) => [name, cut.column(name)])),
          responseMask: cut.responseMask(),
          refLogProbs: request.loss.needsReference && batch.refLogProbs ? take(batch.refLogProbs) : undefined,
        },
        request.totals,
      );
      loss += step.loss;
      for (const [name, value] of Object.entries(step.metrics)) metrics[name] = (metrics[name] ?? 0) + value;
      chunk.forEach((row, i) => {
        // Tinker's cross_entropy is Σ -w·logp: weights -dLoss/dlogp give drmas's gradient (see logProbGradient).
        const weights = Array.from({ length: columns }, (_, j) => -step.gradient[i * columns + j]! || 0);
        data.push(
          this.datum(
            batch.promptIds[row]!,
            batch.responseIds.subarray(row * batch.responseLength, row * batch.responseLength + columns),
            weights,
          ),
        );
      });
    }
    // No rows (all inert): no gradient, but the optimizer still steps, as a local engine's update over no rows does.
    if (data.length > 0) await this.forwardBackward(data, false);
    const { optimizer, lrScale } = request;
    const adam: AdamParams = {
      learning_rate: optimizer.lr * lrScale,
      beta1: optimizer.betas[0],
      beta2: optimizer.betas[1],
      eps: optimizer.eps,
      weight_decay: optimizer.weightDecay,
      grad_clip_norm: optimizer.maxGradNorm,
    };
    const stepped = await this.options.client.call<OptimStepResponse>(
      'optim_step',
      () => this.request({ adam_params: adam, type: 'optim_step' }),
      { idempotent: false },
    );
    this.updates++;
    this.sampler = undefined;
    const said = stepped.metrics ?? {};
    const gradNorm = said[this.options.server.gradNormMetric] ?? said.grad_norm ?? said['skyrl.ai/grad_norm'] ?? Number.NaN;
    return { loss, gradNorm, skipped: false, learningRate: adam.learning_rate, metrics };
  }

  /** The trained parameters live on the server, which names none; param groups cannot be matched. */
  parameterNames(): string[] {
    return [];
  }

  /**
   * Saves weights and optimizer state on the server (`save_weights`) and writes `tinker.json` pointing at them; with
   * `optimizer: false` only sampler weights are saved. The weights themselves stay on the server.
   */
  async save(dir: string, options: { optimizer?: boolean } = {}): Promise<void> {
    const name = `drmas-${Date.now().toString(36)}-${this.updates}`;
    const pointer: TinkerCheckpointPointer = {
      baseUrl: this.options.client.shownUrl,
      baseModel: this.options.baseModel,
      modelId: this.modelId,
      path: '',
    };
    if (options.optimizer !== false) {
      const saved = await this.options.client.call<{ path: string }>(
        'save_weights',
        () => this.request({ path: name, type: 'save_weights' }),
        { idempotent: true },
      );
      pointer.path = saved.path;
    }
    const sampler = await this.currentSampler();
    if ('path' in sampler) pointer.samplerPath = sampler.path;
    try {
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, TINKER_CHECKPOINT_FILE), `${JSON.stringify(pointer, null, 2)}\n`);
    } catch (cause) {
      throw new DrmasError('OUTPUT_UNWRITABLE', `cannot write ${path.join(dir, TINKER_CHECKPOINT_FILE)}: ${(cause as Error).message}`, {
        file: dir,
        cause,
      });
    }
  }

  /** Loads the server-side state `tinker.json` points at into this model (`load_weights`). */
  async load(dir: string): Promise<void> {
    const file = path.join(dir, TINKER_CHECKPOINT_FILE);
    let pointer: TinkerCheckpointPointer;
    try {
      pointer = JSON.parse(await readFile(file, 'utf8')) as TinkerCheckpointPointer;
    } catch (cause) {
      throw new DrmasError('CHECKPOINT_INVALID', `cannot read ${TINKER_CHECKPOINT_FILE}: ${(cause as Error).message}`, {
        file,
        cause,
        hint: 'a model on the tinker backend resumes from a checkpoint written by the tinker backend',
      });
    }
    if (typeof pointer.path !== 'string' || pointer.path === '') {
      throw new DrmasError('CHECKPOINT_INVALID', 'the checkpoint holds sampler weights only (saved without the optimizer state)', { file });
    }
    if (pointer.baseUrl !== this.options.client.shownUrl) {
      throw new DrmasError(
        'CHECKPOINT_INVALID',
        `the checkpoint's weights are on ${pointer.baseUrl}, not on ${this.options.client.shownUrl}`,
        {
          file,
          key: this.options.key,
          hint: 'point tinker.baseUrl at the server that saved them',
        },
      );
    }
    // `optimizer` is required by the SDK's LoadWeightsRequest (no default); SkyRL and drmas tinker-server load it anyway.
    await this.options.client.call('load_weights', () => this.request({ path: pointer.path, optimizer: true, type: 'load_weights' }), {
      idempotent: true,
    });
    this.sampler = undefined;
  }

  exportWeights(): Promise<Map<string, WeightTensor>> {
    return Promise.reject(
      new DrmasError('INVALID_ARGUMENT', `${this.name}'s weights are on the Tinker server and cannot be copied into a local engine`, {
        key: this.options.key.replace(/\.tinker$/, '.rollout'),
        hint: 'leave models.<id>.rollout unset for a model on the tinker backend: it samples through the server',
      }),
    );
  }

  async syncWeights(from: PolicyBackend): Promise<void> {
    if (from !== this) await this.exportWeights();
  }

  /** Stops the session's heartbeats: the server unloads the model when its session times out. */
  dispose(): void {
    this.options.client.close();
  }

  /** A request on this model: its id and the next seq_id with `fields`. */
  private request(fields: Record<string, unknown>): Record<string, unknown> {
    return { model_id: this.modelId, seq_id: ++this.seq, ...fields };
  }

  /**
   * The sampler weights of the current state, saved once per update (`save_weights_for_sampler`): under a name
   * (a `tinker://` path to sample from), or on hosted Tinker as a new sampling session, as the SDK's
   * `save_weights_and_get_sampling_client` does.
   */
  private async currentSampler(): Promise<Sampler> {
    if (this.sampler) return this.sampler;
    const version = this.samplerVersion++;
    const sessions = this.options.server.samplingSessions;
    const saved = await this.options.client.call<{ path?: unknown; sampling_session_id?: unknown }>(
      'save_weights_for_sampler',
      () =>
        this.request({
          ...(sessions ? { sampling_session_seq_id: version } : { path: `drmas-sampler-${version}-${Date.now().toString(36)}` }),
          type: 'save_weights_for_sampler',
        }),
      { idempotent: true },
    );
    if (sessions) {
      if (typeof saved.sampling_session_id !== 'string') throw this.nonsense('save_weights_for_sampler', 'no sampling_session_id');
      this.sampler = { sessionId: saved.sampling_session_id, seq: 0 };
    } else {
      if (typeof saved.path !== 'string') throw this.nonsense('save_weights_for_sampler', 'no path');
      this.sampler = { path: saved.path };
    }
    return this.sampler;
  }

  /**
   * `forward_backward` of `data` (with `forwardOnly`, a forward: hosted Tinker has no `/forward`), in chunks the server
   * takes, each its own request and seq_id; their outputs in order. JSON servers do a forward at `/forward`.
   */
  private async forwardBackward(data: Datum[], forwardOnly: boolean): Promise<ForwardBackwardOutput['loss_fn_outputs']> {
    const outputs: ForwardBackwardOutput['loss_fn_outputs'] = [];
    const { protobuf } = this.options.server;
    for (const part of chunked(data, this.options.server.chunk)) {
      const input = { data: part, loss_fn: 'cross_entropy' as const };
      const answer = await this.options.client.call<ForwardBackwardOutput>(
        protobuf || !forwardOnly ? 'forward_backward' : 'forward',
        () => {
          const seq = ++this.seq;
          if (protobuf) return encodeForwardBackward({ model_id: this.modelId, seq_id: seq, ...input, forward_only: forwardOnly });
          return forwardOnly
            ? { model_id: this.modelId, seq_id: seq, forward_input: input, type: 'forward' }
            : { model_id: this.modelId, seq_id: seq, forward_backward_input: input, type: 'forward_backward' };
        },
        { idempotent: forwardOnly },
      );
      if (answer.loss_fn_outputs?.length !== part.length)
        throw this.nonsense(
          forwardOnly ? 'forward' : 'forward_backward',
          `${answer.loss_fn_outputs?.length} outputs for ${part.length} datums`,
        );
      outputs.push(...answer.loss_fn_outputs);
    }
    return outputs;
  }

  /** Log-probs of each view row's first `columns` response tokens (0 past its response), from `forward`. */
  private async forward(view: BatchView, columns: number): Promise<Float32Array[]> {
    const { batch, rows } = view;
    const R = batch.responseLength;
    for (const row of rows) {
      if (batch.temperatures[row] !== 1) {
        throw new DrmasError(
          'CONFIG_INVALID',
          `${this.name} scores at temperature 1 only, but a row was sampled at ${batch.temperatures[row]}`,
          {
            key: `agents.${batch.turns[row]?.agentId ?? '<role>'}.temperature`,
            hint: "Tinker's forward has no temperature; sample models on the tinker backend at temperature 1",
          },
        );
      }
    }
    const data = Array.from(rows, (row) =>
      this.datum(
        batch.promptIds[row]!,
        batch.responseIds.subarray(row * R, row * R + batch.responseLengths[row]!),
        Array.from({ length: batch.responseLengths[row]! }, () => 0),
      ),
    );
    const outputs = await this.forwardBackward(data, true);
    return Array.from(rows, (row, i) => {
      const offset = responseOffset(batch.promptIds[row]!.length);
      const all = outputs[i]!.logprobs?.data;
      if (!all) throw this.nonsense('forward', 'an output without logprobs');
      const out = new Float32Array(Math.max(columns, 0));
      const length = Math.min(columns, batch.responseLengths[row]!);
      for (let j = 0; j < length; j++) out[j] = all[offset + j]!;
      return out;
    });
  }

  /** A prompt and response as a datum: input the sequence less its last token, targets it shifted by one. */
  private datum(prompt: ArrayLike<number>, response: ArrayLike<number>, responseWeights: readonly number[]): Datum {
    if (prompt.length === 0)
      throw new DrmasError('INVALID_ARGUMENT', `${this.name}: a row has an empty prompt, which Tinker cannot score`, {
        key: this.options.key,
      });
    const sequence = [...Array.from(prompt), ...Array.from(response)];
    const weights = new Array<number>(sequence.length - 1).fill(0);
    const offset = responseOffset(prompt.length);
    responseWeights.forEach((w, j) => (weights[offset + j] = w));
    return {
      model_input: modelInput(sequence.slice(0, -1)),
      loss_fn_inputs: { target_tokens: tensor(sequence.slice(1), 'int64'), weights: tensor(weights, 'float32') },
    };
  }

  private refuseUnsupported(request: UpdateRequest): void {
    if (request.acceptGradNorm) {
      throw new DrmasError(
        'CONFIG_INVALID',
        `${this.name} cannot skip a step on its gradient norm: Tinker applies optim_step without showing the norm first`,
        {
          key: `models.${this.options.name.replace(/^tinker:/, '')}.spikeGuard`,
          hint: 'remove the spike guard from models on the tinker backend',
        },
      );
    }
    if (request.optimizer.maxGradNorm > 0 && !this.options.server.clipsGradients) {
      throw new DrmasError(
        'CONFIG_INVALID',
        `${this.name} cannot clip gradients at ${request.optimizer.maxGradNorm}: ${this.options.server.name}'s optim_step has no ` +
          'grad_clip_norm (SkyRL drops it without a word), so the step would not be clipped',
        {
          key: `models.${this.options.name.replace(/^tinker:/, '')}.optimizer.maxGradNorm`,
          hint: 'set optimizer.maxGradNorm to 0 for models trained on SkyRL (it reports the norm as skyrl.ai/grad_norm)',
        },
      );
    }
    if (request.optimizer.moments === '8bit') {
      const model = this.options.name.replace(/^tinker:/, '');
      throw new DrmasError(
        'CONFIG_INVALID',
        `${this.name} cannot hold AdamW's moments in 8 bits: the server keeps its own optimizer state`,
        {
          key: `models.${model}.optimizer.moments`,
          hint: `remove models.${model}.optimizer.moments (the server decides how it holds Adam's moments)`,
        },
      );
    }
    if (request.optimizer.paramGroups.length > 0) {
      throw new DrmasError('CONFIG_INVALID', `${this.name} cannot train param groups: Tinker's optim_step takes one set of Adam settings`, {
        key: `models.${this.options.name.replace(/^tinker:/, '')}.optimizer.paramGroups`,
      });
    }
  }

  /** The row's cut after the first token whose decoded prefix holds a stop string. */
  private stopStringCut(tokens: readonly number[], stopStrings: readonly string[] | undefined): number | undefined {
    const codec = this.options.tokenizer;
    if (!stopStrings?.length || !codec) return undefined;
    for (let k = 1; k <= tokens.length; k++) {
      const text = codec.decode(tokens.slice(0, k));
      if (stopStrings.some((s) => text.includes(s))) return k;
    }
    return undefined;
  }

  private nonsense(name: string, what: string): DrmasError {
    return new DrmasError('SERVICE_FAILED', `Tinker ${this.options.client.shownUrl}/api/v1/${name} answered ${what}`, {
      key: this.options.key,
      hint: 'the server does not speak the Tinker API this backend follows (see the README)',
    });
  }
}

/** `data` in consecutive parts of at most `limit.datums` datums and (but for a lone datum) `limit.bytes` bytes, as the SDK estimates them. */
function chunked(data: Datum[], limit: TinkerServerTraits['chunk']): Datum[][] {
  if (!limit) return [data];
  const parts: Datum[][] = [];
  let part: Datum[] = [];
  let bytes = 0;
  for (const datum of data) {
    // tinker's _estimate_datum_bytes_count_proto: 4 bytes a token, and each tensor's bytes in its dtype.
    const size =
      datum.model_input.chunks.reduce((sum, chunk) => sum + 4 * chunk.tokens.length, 0) +
      Object.values(datum.loss_fn_inputs).reduce((sum, t) => sum + t.data.length * (t.dtype === 'int64' ? 8 : 4), 0);
    if (part.length > 0 && (part.length === limit.datums || bytes + size > limit.bytes)) {
      parts.push(part);
      part = [];
      bytes = 0;
    }
    part.push(datum);
    bytes += size;
  }
  if (part.length > 0) parts.push(part);
  return parts;
}

/** Hosted Tinker trains LoRA adapters only: a model at rank 0 (all weights) is refused, naming the rank. */
export function loraOnly(key: string): DrmasError {
  return new DrmasError('CONFIG_INVALID', 'hosted Tinker trains LoRA adapters only, and loraRank 0 asks for all weights', {
    key: `${key}.loraRank`,
    hint: "set loraRank to 1 or more (the SDK's default is 32); full-weight training needs a server that offers it (SkyRL, drmas tinker-server)",
  });
}

/** A row's own seed, so rows of one request sample apart and the same request samples alike. */
function rowSeed(seed: number, rowKey: number): number {
  return (Math.imul(seed | 0, 1_000_003) + rowKey) >>> 1;
}
