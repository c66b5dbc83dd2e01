import {
  AUTO_BACKEND,
  BackendFactory,
  DrmasError,
  formatBytes,
  z,
  type Kernel,
  type LoraEngineSettings,
  type ModelSettings,
  type MomentPrecision,
  type Plugin,
  type RegisterContext,
} from '@drmas/core';
import {
  activationBytesPerToken,
  keyValueBytesPerToken,
  BLOCKWISE_BLOCK_SIZE,
  loadCriticTrunk,
  matrixWeightCount,
  loadModelWeights,
  readModelShape,
  type ArchitectureName,
  type ModelSource,
  type ModelWeights,
} from '@drmas/models';
import type * as OrtModule from 'onnxruntime-node';
import { rolloutSessionPool } from '../DecoderSessions.js';
import { createOnnxPolicyBackend, OnnxPolicyBackend } from '../OnnxPolicyBackend.js';
import { OnnxValueModel, valueSessionPool, type ValueSession } from '../critic/OnnxValueModel.js';
import type { SharedSessions } from '../SharedSessions.js';
import { describeProvider, loadOnnxRuntime, parseProviderRequest, PROVIDER_REQUESTS, type ProviderRequest } from '../ExecutionProvider.js';
import { trainingSessionPool, type TrainingSession } from '../training/OnnxTrainer.js';
import { HEAD_VOCAB_CHUNK } from '../VocabChunkedHead.js';
import {
  loraStateBytes,
  microBatchBound,
  RUN_ACTIVATION_FACTOR,
  runOverheadBytes,
  type BackwardSegmentsSetting,
} from '../training/LargeModelMemory.js';
import { SHARED_LAYOUT_BYTES, WEIGHT_LAYOUTS, type WeightLayout } from '../GraphWeights.js';
import { WEIGHT_PRECISIONS, type WeightPrecision } from '../weights/HalfWeights.js';

const PLUGIN_NAME = 'backend-onnx';

/** Far above any machine's cores; a typo (`threads: 1e6`) is refused before onnxruntime tries to start the threads. */
const MAX_THREADS = 4096;

/**
 * An `onnx` backend factory: a policy on onnxruntime-node, as the rollout engine (`models.<id>.rollout: onnx`) or
 * as the trainer too (`backend: onnx`). `models.<id>.provider` picks the execution provider: cpu, cuda or auto. Ranked
 * above tfjs on a CPU, so `auto` takes it wherever onnxruntime-node (an optional peer dependency) loads. Each factory
 * owns the sessions and LoRA bases of the runs it serves (`OnnxRunResources`); the plugin registers one per kernel, so
 * that state lives and goes with the kernel's container, and nothing is held at module level.
 */
export function createOnnxBackendFactory(): BackendFactory {
  const resources = new OnnxRunResources();
  const runSessions = (run: object) => resources.sessions(run);
  const sharedBase = (run: object, source: ModelSource) => resources.base(run, source);
  return {
    name: 'onnx',
    capabilities: ['sample', 'score', 'train', 'lora', 'critic', 'moments8bit'],
    // Trains 2x tfjs-wasm's speed on a CPU (the math job's steps), critics included, so `auto` takes it there.
    priority: () => 20,
    // The training graph runs a whole micro-batch (by default the step's rows) at once and keeps its activations for
    // the backward pass, so they grow with the batch as the key/value cache does (math job, tiny: ~60 KB per sampled
    // token measured as max RSS between 128 and 1,024 rows), and nothing caps the heap short of the machine.
    // A critic's training session keeps its own arena beside the policy's, so its trunk's activations add up.
    cacheBytesPerToken(settings) {
      const shape = readModelShape((settings as ModelSettings).model);
      if (!shape) return undefined;
      const precision = (settings as { kvCachePrecision?: WeightPrecision }).kvCachePrecision ?? 'float32';
      return {
        bytes: keyValueBytesPerToken(shape, precision === 'float16' ? 2 : 4),
        reason: precision === 'float16' ? 'float16 key/value cache' : 'key/value cache',
      };
    },
    trainingBytesPerToken(settings, { budget, critic }) {
      const shape = readModelShape((settings as ModelSettings).model);
      if (!shape) return undefined;
      const criticShape = critic && readModelShape(critic.model);
      // The output head goes over a wide vocabulary in chunks (`writeChunkedScoreHead`): logits one chunk wide.
      const policy = activationBytesPerToken(shape, HEAD_VOCAB_CHUNK);
      // A large model's runs take a bounded number of tokens (`defaultMicroBatchTokens`: the budget's share, or the
      // widest row, which the check counts where it is more), whose activations the run holds about twice over
      // (`RUN_ACTIVATION_FACTOR`).
      const large = 4 * matrixWeightCount(shape) >= SHARED_LAYOUT_BYTES;
      const micro = large ? microBatchBound(shape, budget.bytes) : {};
      const factor = large ? RUN_ACTIVATION_FACTOR : 1;
      const what = large
        ? `${RUN_ACTIVATION_FACTOR} x the activations kept for the backward pass on onnx`
        : 'activations kept for the backward pass on onnx';
      if (!criticShape) return { bytes: factor * policy, reason: what, ...micro };
      return {
        bytes: factor * (policy + activationBytesPerToken(criticShape)),
        reason: `${what}, its critic's included`,
        ...micro,
      };
    },
    // Float32 weights, their gradients and AdamW's two moments, and under the fused layout the graphs' stacked
    // projections (`defaultWeightLayout`; counted as a whole copy, an upper bound): what a full fine-tune holds before any activation; besides, what every training run
    // holds whatever its tokens (`runOverheadBytes`).
    trainingStateBytes(settings, adapters) {
      const shape = readModelShape((settings as ModelSettings).model);
      if (!shape) return undefined;
      if (adapters?.length) return loraStateBytes(shape, adapters);
      const weights = 4 * matrixWeightCount(shape);
      const layout = (settings as { weightLayout?: WeightLayout }).weightLayout ?? (weights >= SHARED_LAYOUT_BYTES ? 'shared' : 'fused');
      const copies = layout === 'shared' ? 4 : 5;
      const run = runOverheadBytes(shape, (settings as { backwardSegments?: BackwardSegmentsSetting }).backwardSegments);
      if ((settings as { optimizer?: { moments?: MomentPrecision } }).optimizer?.moments === '8bit') {
        // A byte a value and a float32 absmax a block of 256, for each moment (tensors under 4,096 values, a few
        // norms' weights, are counted so too).
        const moments = (weights / 4) * 2 * (1 + 4 / BLOCKWISE_BLOCK_SIZE);
        const what =
          copies === 4 ? 'weights read in place by every graph and gradients' : "weights, the graphs' stacked copy and gradients";
        return {
          bytes: (copies - 2) * weights + moments + run.bytes,
          reason: `float32 ${what}: ${copies - 2} x ${formatBytes(weights)}; AdamW's two moments in 8 bits ${formatBytes(moments)}; ${run.reason}`,
        };
      }
      const what =
        copies === 4
          ? "weights read in place by every graph, gradients and AdamW's two moments"
          : "weights, the graphs' stacked copy (at most one), gradients and AdamW's two moments";
      return {
        bytes: copies * weights + run.bytes,
        reason: `float32 ${what}: ${copies} x ${formatBytes(weights)}; ${run.reason}`,
      };
    },
    describe: () =>
      `onnxruntime-node, execution provider ${PROVIDER_REQUESTS.join(' | ')} (models.<id>.provider, default auto: CUDA when installed)`,
    probe: () =>
      loadOnnxRuntime().then(
        () => undefined,
        (error: Error) => error.message,
      ),
    async create({ modelId, settings, run, purpose }) {
      const model = settings as ModelSettings;
      const provider = parseProviderRequest(model.provider, `models.${modelId}.provider`);
      const lora = settings.lora as LoraEngineSettings | undefined;
      const sessions = runSessions(run);
      // A LoRA reference reads the run's shared float32 base: no copy of its own to shrink.
      const weightPrecision = purpose === 'reference' && !lora ? referencePrecision(model) : 'float32';
      try {
        const source = { model: model.model, architecture: model.architecture as ArchitectureName | undefined, seed: model.seed };
        const options = {
          name: lora ? `onnx:${modelId}@${lora.agent}` : `onnx:${modelId}`,
          provider,
          sessionOptions: modelSessionOptions(model),
          weightLayout: (model as { weightLayout?: WeightLayout }).weightLayout,
          backwardSegments: (model as { backwardSegments?: BackwardSegmentsSetting }).backwardSegments,
          memoryBudget: run.memoryBudget.bytes,
          weightPrecision,
          kvCachePrecision: (model as { kvCachePrecision?: WeightPrecision }).kvCachePrecision,
          rolloutSessions: sessions.rollout,
          trainingSessions: sessions.training,
          warn: (message: string) => run.log(`warning: ${message}`),
        };
        if (lora) {
          const { agent, seed, ...loraSettings } = lora;
          const { config, weights, tokenizer } = await sharedBase(run, source);
          const backend = await OnnxPolicyBackend.create(config, weights, tokenizer, {
            ...options,
            lora: { settings: loraSettings, seed },
          });
          run.log(
            `model ${modelId}, agent ${agent}: LoRA r=${lora.rank} alpha=${lora.alpha} on ${lora.targetModules.join(', ')} over ${model.model} on ${backend.runtime}`,
          );
          return backend;
        }
        const backend = await createOnnxPolicyBackend({ ...source, ...options });
        run.log(
          purpose === 'reference'
            ? `model ${modelId}: reference ${model.model} on ${backend.runtime}, ${weightPrecision} weights (${formatBytes(backend.weightBytes)})`
            : `model ${modelId}: ${model.model} on ${backend.runtime}`,
        );
        return backend;
      } catch (cause) {
        if (!DrmasError.is(cause)) throw cause;
        throw cause.at(`models.${modelId}.model`, `model ${modelId}${cause.file ? '' : ` (${model.model})`} failed to load on onnx`);
      }
    },
    async createCritic({ criticId, settings, run, shareTrunk }) {
      const model = settings as ModelSettings;
      const name = `onnx:critic:${criticId}`;
      const options = modelSessionOptions(model) ?? {};
      if (shareTrunk) {
        if (!(shareTrunk instanceof OnnxPolicyBackend)) {
          throw new DrmasError(
            'CONFIG_INVALID',
            `critic ${criticId} shares the trunk of a ${shareTrunk.name} policy, which is not on onnx`,
            {
              key: 'critic.shareTrunk',
              hint: 'train the policy on onnx, or give the critic a trunk of its own (shareTrunk: false)',
            },
          );
        }
        if (!shareTrunk.sharedTrunk()) {
          throw new DrmasError(
            'CONFIG_INVALID',
            `critic ${criticId} cannot share the trunk of ${shareTrunk.name}, which trains a LoRA adapter`,
            {
              key: 'critic.shareTrunk',
              hint: 'give the critic a trunk of its own (shareTrunk: false)',
            },
          );
        }
        run.log(`critic ${criticId}: a value head on the trunk of ${shareTrunk.name}`);
        return OnnxValueModel.create(
          name,
          shareTrunk.runtime,
          { shared: () => shareTrunk.sharedTrunk()! },
          options,
          runSessions(run).critic,
        );
      }
      const loaded = await loadCriticTrunk(
        criticId,
        { model: model.model, architecture: model.architecture as ArchitectureName | undefined, seed: model.seed },
        'onnx',
      );
      const ort = await loadOnnxRuntime();
      const runtime = describeProvider(ort, { provider: 'cpu', requested: 'cpu' }, options.intraOpNumThreads);
      run.log(`critic ${criticId}: ${model.model} with a zero-initialized value head on ${runtime}`);
      return OnnxValueModel.create(
        name,
        runtime,
        { own: { config: loaded.config, weights: loaded.weights } },
        options,
        runSessions(run).critic,
      );
    },
  };
}

/**
 * How a reference model (`purpose: 'reference'`) holds its weights: `models.<id>.referencePrecision`, by default
 * float16 from `SHARED_LAYOUT_BYTES` of float32 weights (Qwen2.5-0.5B: 1.84 GiB down to 0.92), float32 below (the
 * built-in `tiny` and `small`, whose runs stay bitwise as before).
 */
export function referencePrecision(settings: { model: string; referencePrecision?: WeightPrecision }): WeightPrecision {
  if (settings.referencePrecision) return settings.referencePrecision;
  const shape = readModelShape(settings.model);
  return shape && 4 * matrixWeightCount(shape) >= SHARED_LAYOUT_BYTES ? 'float16' : 'float32';
}

/** The session options a model's settings ask for, beside `sessionOptions`' defaults (undefined: none). */
function modelSessionOptions(model: ModelSettings): OrtModule.InferenceSession.SessionOptions | undefined {
  const options: OrtModule.InferenceSession.SessionOptions = {};
  const { threads, memoryPattern } = model as { threads?: number; memoryPattern?: boolean };
  if (threads !== undefined) options.intraOpNumThreads = threads;
  if (memoryPattern !== undefined) options.enableMemPattern = memoryPattern;
  return Object.keys(options).length ? options : undefined;
}

/**
 * The sessions of a run's onnx engines and critics: those of one architecture (models per agent from one checkpoint,
 * a critic per agent) share their sessions and memory arenas, their weights being the graphs' inputs
 * (`SharedSessions`).
 */
interface RunSessions {
  rollout: SharedSessions<OrtModule.InferenceSession>;
  training: SharedSessions<TrainingSession>;
  critic: SharedSessions<ValueSession>;
}

/**
 * What one factory keeps per run: its engines' shared sessions, and the frozen bases of its LoRA engines by model
 * source (every adapter on one model reads the same weight buffers, MAVERL / PettingLLMs: one base, an adapter per
 * agent, which no engine writes). Keyed by the run, so runs through one factory never share.
 */
class OnnxRunResources {
  private readonly byRun = new WeakMap<object, { sessions: RunSessions; bases: Map<string, Promise<ModelWeights>> }>();

  sessions(run: object): RunSessions {
    return this.of(run).sessions;
  }

  base(run: object, source: ModelSource): Promise<ModelWeights> {
    const { bases } = this.of(run);
    const key = JSON.stringify([source.model, source.architecture ?? null, source.seed ?? null]);
    let base = bases.get(key);
    if (!base) bases.set(key, (base = loadModelWeights(source)));
    return base;
  }

  private of(run: object) {
    let resources = this.byRun.get(run);
    if (!resources) {
      resources = {
        sessions: { rollout: rolloutSessionPool(), training: trainingSessionPool(), critic: valueSessionPool() },
        bases: new Map(),
      };
      this.byRun.set(run, resources);
    }
    return resources;
  }
}

/** Registers the `onnx` backend and checks `models.<id>.provider` at validation. */
export class OnnxBackendPlugin implements Plugin {
  readonly name = PLUGIN_NAME;
  /** `models.<id>.provider`: onnxruntime's execution provider for this model's onnx engine. */
  readonly configSchema = {
    models: z.strictObject({
      provider: z.enum(PROVIDER_REQUESTS).optional(),
      threads: z.number().int().min(1).max(MAX_THREADS).optional(),
      memoryPattern: z.boolean().optional(),
      weightLayout: z.enum(WEIGHT_LAYOUTS).optional(),
      referencePrecision: z.enum(WEIGHT_PRECISIONS).optional(),
      kvCachePrecision: z.enum(WEIGHT_PRECISIONS).optional(),
      backwardSegments: z.union([z.literal('auto'), z.number().int().min(1)]).optional(),
    }),
  };

  register(ctx: RegisterContext): void {
    ctx.provide(BackendFactory, 'onnx', createOnnxBackendFactory());
  }

  apply(kernel: Kernel): void {
    kernel.hooks.validate.tap(PLUGIN_NAME, (config) => {
      for (const [id, model] of Object.entries(config.models)) {
        if (model.backend === 'onnx' || model.backend === AUTO_BACKEND || model.rollout === 'onnx')
          parseProviderRequest(model.provider, `models.${id}.provider`);
      }
    });
  }
}

/** The plugin module's default export: `plugins: ['backend-onnx']`. */
export default function onnxBackendPlugin(): OnnxBackendPlugin {
  return new OnnxBackendPlugin();
}

declare module '@drmas/core' {
  interface ModelConfig {
    /** onnxruntime's execution provider for this model's onnx engine (default auto: CUDA when installed). */
    provider?: ProviderRequest;
    /**
     * onnxruntime's intra-op threads for this model's onnx engine on the CPU (default: the cores). Lower it where
     * several processes share the cores: `drmas rollout-worker` processes, or a trainer beside its workers.
     */
    threads?: number;
    /**
     * onnxruntime's memory pattern (`enableMemPattern`) for this model's onnx sessions, an arena layout planned and
     * kept per input shape (default false: the shapes change at nearly every call, and the kept plans only held memory).
     */
    memoryPattern?: boolean;
    /**
     * How this model's onnx graphs hold its weights: `shared` (one float32 copy every graph reads) or `fused` (a
     * copy of the projections stacked per layer beside it); default `shared` from 512 MiB of float32 weights, else `fused`.
     */
    weightLayout?: WeightLayout;
    /**
     * How this model's reference (the frozen model of a KL penalty or DPO) holds its weights on onnx: `float16` (half
     * the bytes; log-probs within float16's rounding of the weights) or `float32`; default `float16` from 512 MiB of
     * float32 weights, else `float32`. A LoRA reference reads the run's shared float32 base.
     */
    referencePrecision?: WeightPrecision;
    /**
     * How this model's onnx engine holds the key/value caches it samples with: `float32` (default) or `float16` (half
     * the bytes a sampled token holds, for a cast of each layer's past keys and values per decoded token; the sampled
     * log-probs differ from `score`'s by float16's rounding of the cached values).
     */
    kvCachePrecision?: WeightPrecision;
    /**
     * How many segments of layers a full fine-tune's training run takes its backward in on onnx: each segment's
     * forward is run again before its backward, so a run holds one segment's activations and returned gradients, for
     * one more forward of the lower layers; `auto` (default) segments a model from 512 MiB of float32 weights whose
     * gradients exceed one micro-batch's activations, 1 never.
     */
    backwardSegments?: BackwardSegmentsSetting;
  }
}
