import { createRequire } from 'node:module';
import {
  BackendFactory,
  DrmasError,
  formatBytes,
  type Kernel,
  type LoraEngineSettings,
  type ModelSettings,
  type Plugin,
  type RegisterContext,
} from '@drmas/core';
import { createTfjsPolicyBackend, TfjsPolicyBackend } from '../TfjsPolicyBackend.js';
import { loadCriticTrunk, matrixWeightCount, readModelShape, type ArchitectureName } from '@drmas/models';
import { TfjsValueModel } from '../critic/TfjsValueModel.js';
import { DecoderModel } from '../model/DecoderModel.js';
import { selectRuntime } from '../runtime/RuntimeSelector.js';
import { builtinRuntimeCandidates } from '../runtime/RuntimeSelector.js';

const PLUGIN_NAME = 'backend-tfjs';
const ARCHITECTURES: ArchitectureName[] = ['LlamaForCausalLM', 'Qwen2ForCausalLM', 'Qwen3ForCausalLM'];
/** WebAssembly's 32-bit memory: the wasm runtime's heap cannot grow past it. */
const WASM_HEAP_LIMIT = 4 * 2 ** 30;

/** The wasm runtime's heap, where a model with these settings would run on wasm; undefined on a native runtime. */
function wasmHeap(settings: Record<string, unknown>): { bytes: number; reason: string } | undefined {
  const runtime = (settings as ModelSettings).runtime;
  if (runtime === 'wasm') return { bytes: WASM_HEAP_LIMIT, reason: "the wasm runtime's 4 GiB heap" };
  if (runtime === 'auto' && !installed('@tensorflow/tfjs-node-gpu', '@tensorflow/tfjs-node')) {
    return { bytes: WASM_HEAP_LIMIT, reason: "the wasm runtime's 4 GiB heap (runtime auto without tfjs-node installed)" };
  }
  return undefined;
}

/** Whether `auto` would find one of `packages` (native runtimes), judged by the packages resolving. */
function installed(...packages: string[]): boolean {
  const require = createRequire(import.meta.url);
  return packages.some((name) => {
    try {
      require.resolve(name);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * The `tfjs` backend factory: trains and samples Llama/Qwen decoders with tfjs on the best runtime installed. Always
 * available (its wasm and cpu runtimes are dependencies); `auto` ranks it below onnx unless tfjs-node-gpu runs it.
 * It trains no LoRA adapters.
 */
export const tfjsBackendFactory: BackendFactory = {
  name: 'tfjs',
  capabilities: ['sample', 'score', 'train', 'critic'],
  // `auto` takes tfjs over onnx only on a GPU (tfjs-node-gpu); on a CPU onnx trains 2x faster.
  priority(settings) {
    const runtime = (settings as ModelSettings).runtime;
    return runtime === 'tfjs-node-gpu' || (runtime === 'auto' && installed('@tensorflow/tfjs-node-gpu')) ? 30 : 10;
  },
  describe: () =>
    `tfjs on ${builtinRuntimeCandidates()
      .sort((a, b) => b.priority - a.priority)
      .map((c) => c.name)
      .join(' > ')} (first that loads)`,
  memoryLimit: wasmHeap,
  // A model whose float32 weights alone outgrow the wasm heap cannot load there (Qwen2.5-1.5B, Llama-3.2-1B).
  refuses(settings) {
    const limit = wasmHeap(settings);
    const shape = limit && readModelShape((settings as ModelSettings).model);
    const bytes = shape ? 4 * matrixWeightCount(shape) : 0;
    if (!limit || bytes <= limit.bytes) return undefined;
    return `its float32 weights alone take ${formatBytes(bytes)}, beyond ${limit.reason}`;
  },
  async create({ modelId, settings, run }) {
    const model = settings as ModelSettings;
    const lora = settings.lora as LoraEngineSettings | undefined;
    if (lora) {
      throw new DrmasError('CONFIG_INVALID', `agent "${lora.agent}" trains a LoRA adapter, which the tfjs backend does not support`, {
        key: `agents.${lora.agent}.lora`,
        hint: `train model ${modelId} on onnx (models.${modelId}.backend: onnx), or remove agents.${lora.agent}.lora`,
      });
    }
    let backend;
    try {
      backend = await createTfjsPolicyBackend({
        name: `tfjs:${modelId}`,
        model: model.model,
        architecture: model.architecture as ArchitectureName | undefined,
        seed: model.seed,
        runtime: model.runtime,
      });
    } catch (cause) {
      if (!DrmasError.is(cause)) throw cause;
      const key = cause.code === 'RUNTIME_UNAVAILABLE' ? `models.${modelId}.runtime` : `models.${modelId}.model`;
      throw cause.at(key, `model ${modelId}${cause.file ? '' : ` (${model.model})`} failed to load`);
    }
    run.log(`model ${modelId}: ${model.model} on tfjs runtime ${backend.runtime}`);
    return backend;
  },
  async createCritic({ criticId, settings, run, shareTrunk }) {
    const model = settings as ModelSettings;
    const name = `tfjs:critic:${criticId}`;
    if (shareTrunk) {
      if (!(shareTrunk instanceof TfjsPolicyBackend)) {
        throw new DrmasError('CONFIG_INVALID', `critic ${criticId} shares the trunk of a ${shareTrunk.name} policy, which is not on tfjs`, {
          key: 'critic.shareTrunk',
          hint: 'train the policy on tfjs, or give the critic a trunk of its own (shareTrunk: false)',
        });
      }
      run.log(`critic ${criticId}: a value head on the trunk of ${shareTrunk.name}`);
      return new TfjsValueModel(name, shareTrunk.runtime, { shared: () => shareTrunk.model });
    }
    const runtime = await selectRuntime(model.runtime ?? 'auto');
    const loaded = await loadCriticTrunk(
      criticId,
      { model: model.model, architecture: model.architecture as ArchitectureName | undefined, seed: model.seed },
      'tfjs',
    );
    run.log(`critic ${criticId}: ${model.model} with a zero-initialized value head on tfjs runtime ${runtime.description}`);
    return new TfjsValueModel(name, runtime.description, { own: DecoderModel.fromTensors(loaded.config, loaded.weights) });
  },
};

/** Registers the `tfjs` backend (`models.<id>.backend: tfjs`) and checks architecture names at validation. */
export class TfjsBackendPlugin implements Plugin {
  readonly name = PLUGIN_NAME;

  register(ctx: RegisterContext): void {
    ctx.provide(BackendFactory, 'tfjs', tfjsBackendFactory);
  }

  apply(kernel: Kernel): void {
    kernel.hooks.validate.tap(PLUGIN_NAME, (config) => {
      for (const [id, model] of Object.entries(config.models)) {
        if (model.architecture && !ARCHITECTURES.includes(model.architecture as ArchitectureName)) {
          throw new DrmasError('CONFIG_INVALID', `unknown architecture "${model.architecture}"`, {
            key: `models.${id}.architecture`,
            hint: `use one of ${ARCHITECTURES.join(', ')}`,
          });
        }
      }
    });
  }
}

/** The plugin module's default export: `plugins: ['backend-tfjs']`. */
export default function tfjsBackendPlugin(): TfjsBackendPlugin {
  return new TfjsBackendPlugin();
}
