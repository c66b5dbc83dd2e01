import { existsSync } from 'node:fs';
import path from 'node:path';
import { lossColumn, lossTotals, TrainingBatch, type LossFunction, type PolicyBackend } from '@drmas/core';
import {
  inputTokens,
  tensor,
  type AdamParams,
  type Datum,
  type ForwardBackwardOutput,
  type ModelInput,
  type OptimStepResponse,
  type SampleResponse,
  type SamplingParams,
} from '../client/tinkerWire.js';
import { MicroBatcher } from '@drmas/models';
import { RequestFailure } from './FutureQueue.js';

/** Opens a drmas engine on `model` (`tiny`, or a Hugging Face checkpoint folder the server saved). */
export type EngineFactory = (model: string) => Promise<PolicyBackend>;

/**
 * Tinker's `cross_entropy`, `Σ_t -w_t · logp_t` over the targets (sum, not mean), with the weights in the batch's
 * `lossWeights` column: what the server backpropagates for `forward_backward`.
 */
export const WEIGHTED_CROSS_ENTROPY: LossFunction = {
  columns: ['lossWeights'],
  compute(ops, input) {
    return { loss: ops.neg(ops.sum(ops.mul(ops.mul(lossColumn(input, 'lossWeights'), input.logProbs), input.responseMask))), metrics: {} };
  },
};

interface TrainedModel {
  id: string;
  baseModel: string;
  loraRank: number;
  engine: PolicyBackend;
  /** Sequences and weights of the forward_backward calls since the last optim_step: their gradients add up. */
  pending: Array<{ sequence: number[]; weights: number[] }>;
}

/** A `tinker://<model_id>/<kind>/<name>` path. */
const TINKER_PATH = /^tinker:\/\/([A-Za-z0-9_-]+)\/(weights|sampler_weights)\/([A-Za-z0-9_.-]+)$/;
const NAME = /^[A-Za-z0-9_.-]{1,200}$/;
/** Sampler engines kept open (one per saved sampler path in use). */
const SAMPLERS_KEPT = 4;
/** Rows of concurrent `asample` requests gathered into one engine call: the client sends one request per prompt. */
const SAMPLING_BATCH = { windowMs: 5, maxBatch: 256 };

interface Sampler {
  engine: PolicyBackend;
  batcher: MicroBatcher;
  /** Requests sampling on it now: an evicted sampler is disposed when the last one ends. */
  active: number;
  evicted: boolean;
}

/** A datum as a teacher-forced sequence: the input and its last target; targets must be the input shifted by one. */
function datumSequence(datum: Datum, index: number): { sequence: number[]; weights: number[] } {
  const input = inputTokens(datum.model_input ?? { chunks: [] });
  const targets = datum.loss_fn_inputs?.target_tokens?.data;
  const weights = datum.loss_fn_inputs?.weights?.data ?? targets?.map(() => 1);
  if (!targets || input.length === 0 || targets.length !== input.length || weights?.length !== targets.length) {
    throw new RequestFailure(`data[${index}]: model_input, target_tokens and weights must be non-empty and of one length`);
  }
  for (let i = 0; i + 1 < input.length; i++) {
    if (targets[i] !== input[i + 1]) {
      throw new RequestFailure(
        `data[${index}]: target_tokens[${i}] is not model_input[${i + 1}]; this server scores the input's own next tokens only`,
      );
    }
  }
  return { sequence: [...input, targets[targets.length - 1]!], weights };
}

/**
 * The models a `drmas tinker-server` trains, each a full copy of its base model on a drmas engine (LoRA is not on
 * drmas's trainers yet: `lora_config.rank` is accepted and reported, and every weight trains). Weights are saved as
 * Hugging Face checkpoints under `dataDir/<model_id>/<weights|sampler_weights>/<name>`.
 */
export class TrainingModels {
  private readonly models = new Map<string, TrainedModel>();
  private readonly samplers = new Map<string, Promise<Sampler>>();
  private nextModel = 1;

  constructor(
    private readonly open: EngineFactory,
    readonly dataDir: string,
    /** What `get_server_capabilities` lists; any other base model is still tried. */
    readonly supportedModels: readonly string[],
  ) {}

  async createModel(body: { base_model?: unknown; lora_config?: { rank?: unknown } }): Promise<{ model_id: string; type: 'create_model' }> {
    if (typeof body.base_model !== 'string' || body.base_model === '') throw new RequestFailure('base_model must be a model name');
    const id = `model_${this.nextModel++}`;
    let engine: PolicyBackend;
    try {
      engine = await this.open(body.base_model);
    } catch (error) {
      throw new RequestFailure(`base_model ${body.base_model} cannot be loaded: ${(error as Error).message}`);
    }
    const rank = typeof body.lora_config?.rank === 'number' ? body.lora_config.rank : 0;
    this.models.set(id, { id, baseModel: body.base_model, loraRank: rank, engine, pending: [] });
    return { model_id: id, type: 'create_model' };
  }

  /** Drops a model and frees its engine (its session timed out); later requests on it find no model. */
  unload(modelId: string): void {
    this.models.get(modelId)?.engine.dispose();
    this.models.delete(modelId);
  }

  info(modelId: unknown): Record<string, unknown> {
    const model = this.model(modelId);
    return {
      model_id: model.id,
      status: 'ready',
      model_data: { base_model: model.baseModel, lora_config: { rank: model.loraRank }, model_name: model.baseModel },
      // Not part of Tinker's answer: says what this server really trains.
      training: `full weights on ${model.engine.runtime} (lora_config.rank ${model.loraRank} is not applied)`,
    };
  }

  /** `forward` (and, with `backward`, `forward_backward`: the data's gradients are kept for the next `optim_step`). */
  async forward(body: { model_id?: unknown; data?: unknown; loss_fn?: unknown }, backward: boolean): Promise<ForwardBackwardOutput> {
    const model = this.model(body.model_id);
    if (body.loss_fn !== 'cross_entropy')
      throw new RequestFailure(`loss_fn ${JSON.stringify(body.loss_fn)} is not served here; use cross_entropy`);
    if (!Array.isArray(body.data) || body.data.length === 0) throw new RequestFailure('data must be a non-empty list of datums');
    const rows = (body.data as Datum[]).map(datumSequence);
    const batch = TrainingBatch.fromSequences(
      rows.map((r) => r.sequence.slice(0, 1)),
      rows.map((r) => r.sequence.slice(1)),
    );
    const { logProbs } = await model.engine.score({ batch: batch.all() });
    const R = batch.responseLength;
    let total = 0;
    const outputs = rows.map((row, i) => {
      const lp = Array.from(logProbs.subarray(i * R, i * R + row.weights.length));
      const elementwise = lp.map((v, t) => -v * row.weights[t]!);
      total += elementwise.reduce((a, b) => a + b, 0);
      return { logprobs: tensor(lp, 'float32'), elementwise_loss: tensor(elementwise, 'float32') };
    });
    if (backward) model.pending.push(...rows);
    return { loss_fn_output_type: 'ArrayRecord', loss_fn_outputs: outputs, metrics: { 'loss:sum': total } };
  }

  /**
   * `optim_step`: one AdamW step on the gradients of every forward_backward since the last one (none: a zero
   * gradient, which still decays the weights and moments, as a drmas engine's step over no rows does).
   */
  async optimStep(body: { model_id?: unknown; adam_params?: Partial<AdamParams> }): Promise<OptimStepResponse> {
    const model = this.model(body.model_id);
    const adam = { learning_rate: 1e-4, beta1: 0.9, beta2: 0.95, eps: 1e-12, weight_decay: 0, grad_clip_norm: 0, ...body.adam_params };
    const rows = model.pending;
    model.pending = [];
    const batch = TrainingBatch.fromSequences(
      rows.map((r) => r.sequence.slice(0, 1)),
      rows.map((r) => r.sequence.slice(1)),
    );
    const R = batch.responseLength;
    const weights = new Float32Array(batch.rows * R);
    rows.forEach((row, i) => weights.set(row.weights, i * R));
    batch.lossWeights = weights;
    const all = batch.all();
    const result = await model.engine.update({
      batch: all,
      totals: lossTotals(all, { responseLength: R, microBatchSize: rows.length }),
      loss: WEIGHTED_CROSS_ENTROPY,
      microBatchSize: rows.length,
      optimizer: {
        lr: adam.learning_rate,
        betas: [adam.beta1, adam.beta2],
        eps: adam.eps,
        weightDecay: adam.weight_decay,
        maxGradNorm: adam.grad_clip_norm,
        paramGroups: [],
      },
      lrScale: 1,
    });
    return { metrics: { grad_norm: result.gradNorm, loss: result.loss, skipped: result.skipped ? 1 : 0 } };
  }

  /** `save_weights` (weights and optimizer state) or `save_weights_for_sampler` (weights only). */
  async save(body: { model_id?: unknown; path?: unknown }, kind: 'weights' | 'sampler_weights'): Promise<{ path: string; type: string }> {
    const model = this.model(body.model_id);
    if (typeof body.path !== 'string' || !NAME.test(body.path))
      throw new RequestFailure('path must be a name of letters, digits, _, - and .');
    const dir = path.join(this.dataDir, model.id, kind, body.path);
    if (existsSync(dir)) throw new RequestFailure(`${kind} ${body.path} of ${model.id} already exists`);
    await model.engine.save(dir, { optimizer: kind === 'weights' });
    return { path: `tinker://${model.id}/${kind}/${body.path}`, type: kind === 'weights' ? 'save_weights' : 'save_weights_for_sampler' };
  }

  /** `load_weights`: weights and optimizer state saved by `save_weights` (of this model or another on the same base). */
  async load(body: { model_id?: unknown; path?: unknown }): Promise<{ path: string; type: 'load_weights' }> {
    const model = this.model(body.model_id);
    const dir = this.savedDir(body.path, 'weights');
    await model.engine.load(dir, { optimizer: true });
    model.pending = [];
    return { path: body.path as string, type: 'load_weights' };
  }

  /** `asample`: `num_samples` continuations of one prompt from saved sampler weights (or a base model). */
  async sample(body: {
    model_path?: unknown;
    base_model?: unknown;
    prompt?: ModelInput;
    sampling_params?: Partial<SamplingParams>;
    num_samples?: unknown;
  }): Promise<SampleResponse> {
    const prompt = body.prompt ? inputTokens(body.prompt) : [];
    if (prompt.length === 0) throw new RequestFailure('prompt must hold at least one token');
    const count = typeof body.num_samples === 'number' && Number.isInteger(body.num_samples) && body.num_samples > 0 ? body.num_samples : 1;
    const params = body.sampling_params ?? {};
    if (typeof params.max_tokens !== 'number' || params.max_tokens < 1)
      throw new RequestFailure('sampling_params.max_tokens must be at least 1');
    const sampler = await this.sampler(body.model_path, body.base_model);
    sampler.active++;
    try {
      return { type: 'sample', sequences: await this.draw(sampler, prompt, count, { ...params, max_tokens: params.max_tokens }) };
    } finally {
      sampler.active--;
      if (sampler.evicted && sampler.active === 0) sampler.engine.dispose();
    }
  }

  private async draw(
    sampler: Sampler,
    prompt: number[],
    count: number,
    params: Partial<SamplingParams> & { max_tokens: number },
  ): Promise<SampleResponse['sequences']> {
    const stop = params.stop ?? [];
    const stopTokenIds = stop.filter((s): s is number => typeof s === 'number');
    const stopStrings = stop.filter((s): s is string => typeof s === 'string');
    const topK = params.top_k !== undefined && params.top_k > 0 ? params.top_k : 0;
    // Sample i of a seeded request draws from seed + i, so a request's samples differ and repeat across calls.
    const seedOf = (i: number) => (params.seed === undefined ? undefined : params.seed + i);
    const settings = { maxNewTokens: params.max_tokens, temperature: params.temperature ?? 1, topP: params.top_p ?? 1 };
    if (topK === 0 && stopTokenIds.length === 0) {
      // Rows of concurrent requests (one per prompt of the client's batch) share engine calls.
      const rows = await Promise.all(
        Array.from({ length: count }, (_, i) => sampler.batcher.sample({ promptIds: prompt, ...settings, seed: seedOf(i), stopStrings })),
      );
      return rows.map((row) => ({ tokens: row.tokenIds, logprobs: row.logProbs, stop_reason: row.finishReason }));
    } else {
      const result = await sampler.engine.generate({
        prompts: Array.from({ length: count }, () => prompt),
        // Seeded: row i as a one-row call at seed + i (key 0), as the batched path samples it.
        ...(params.seed === undefined
          ? {}
          : {
              seed: params.seed,
              rowSeeds: Array.from({ length: count }, (_, i) => seedOf(i)!),
              rowKeys: Array.from({ length: count }, () => 0),
            }),
        ...settings,
        topK,
        stopTokenIds,
        stopStrings,
      });
      return result.tokenIds.map((tokens, i) => ({ tokens, logprobs: result.logProbs[i]!, stop_reason: result.finishReasons[i]! }));
    }
  }

  async dispose(): Promise<void> {
    for (const model of this.models.values()) model.engine.dispose();
    for (const sampler of this.samplers.values()) (await sampler).engine.dispose();
    this.models.clear();
    this.samplers.clear();
  }

  private model(id: unknown): TrainedModel {
    const model = typeof id === 'string' ? this.models.get(id) : undefined;
    if (!model) throw new RequestFailure(`no model ${JSON.stringify(id)}; create one with create_model`);
    return model;
  }

  private savedDir(tinkerPath: unknown, kind: 'weights' | 'sampler_weights'): string {
    const match = typeof tinkerPath === 'string' ? TINKER_PATH.exec(tinkerPath) : null;
    if (!match || match[2] !== kind)
      throw new RequestFailure(`path must be tinker://<model_id>/${kind}/<name>, got ${JSON.stringify(tinkerPath)}`);
    const dir = path.join(this.dataDir, match[1]!, kind, match[3]!);
    if (!existsSync(dir)) throw new RequestFailure(`no ${kind} ${match[3]} of ${match[1]}`);
    return dir;
  }

  private sampler(modelPath: unknown, baseModel: unknown): Promise<Sampler> {
    const source = modelPath === undefined ? baseModel : this.savedDir(modelPath, 'sampler_weights');
    if (typeof source !== 'string') throw new RequestFailure('give model_path (tinker://.../sampler_weights/...) or base_model');
    let sampler = this.samplers.get(source);
    if (!sampler) {
      sampler = this.open(source).then((engine) => ({
        engine,
        batcher: new MicroBatcher(engine, SAMPLING_BATCH),
        active: 0,
        evicted: false,
      }));
      this.samplers.set(source, sampler);
      sampler.catch(() => this.samplers.delete(source));
      if (this.samplers.size > SAMPLERS_KEPT) {
        const [oldest, opened] = this.samplers.entries().next().value as [string, Promise<Sampler>];
        this.samplers.delete(oldest);
        void opened.then(
          (s) => {
            s.evicted = true;
            if (s.active === 0) s.engine.dispose();
          },
          () => undefined,
        );
      }
    }
    return sampler;
  }
}
