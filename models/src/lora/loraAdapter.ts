import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isLoraTargetModule, LORA_TARGET_MODULES, type LoraSettings, type LoraTargetModule, type WeightTensor } from '@drmas/core';
import { CheckpointError, TensorShapeError } from '../checkpoint/errors.js';
import { readSafetensors, serializeSafetensors } from '../checkpoint/safetensors.js';
import type { DecoderConfig } from '../config/ModelConfig.js';
import type { SeededRandom } from '../decoding/SeededRandom.js';

/** The adapter files PEFT's `save_pretrained` writes and `PeftModel.from_pretrained` reads. */
export const ADAPTER_CONFIG_FILE = 'adapter_config.json';
export const ADAPTER_WEIGHTS_FILE = 'adapter_model.safetensors';

/**
 * PEFT's key prefix in `adapter_model.safetensors`: a `PeftModelForCausalLM` wraps the `LoraModel` (`base_model`),
 * which wraps the transformers model (`model`), whose decoder is again `model`; `get_peft_model_state_dict` drops
 * only the adapter name (`lora_A.default.weight` -> `lora_A.weight`).
 */
const PEFT_PREFIX = 'base_model.model.';

/** `model.layers.N.self_attn.q_proj` or `model.layers.N.mlp.gate_proj`: the module's path in the decoder. */
export function loraModulePath(layer: number, module: LoraTargetModule): string {
  const block = module === 'gate_proj' || module === 'up_proj' || module === 'down_proj' ? 'mlp' : 'self_attn';
  return `model.layers.${layer}.${block}.${module}`;
}

/** `[out, in]` of a target module's base weight. */
export function loraModuleShape(
  config: Pick<DecoderConfig, 'numHeads' | 'numKvHeads' | 'headDim' | 'hiddenSize' | 'intermediateSize'>,
  module: LoraTargetModule,
): [number, number] {
  const c = config;
  const q = c.numHeads * c.headDim;
  const kv = c.numKvHeads * c.headDim;
  const shapes: Record<LoraTargetModule, [number, number]> = {
    q_proj: [q, c.hiddenSize],
    k_proj: [kv, c.hiddenSize],
    v_proj: [kv, c.hiddenSize],
    o_proj: [c.hiddenSize, q],
    gate_proj: [c.intermediateSize, c.hiddenSize],
    up_proj: [c.intermediateSize, c.hiddenSize],
    down_proj: [c.hiddenSize, c.intermediateSize],
  };
  return shapes[module];
}

/** The names of one module's adapter tensors (`<module>.lora_A.weight` `[r, in]`, `<module>.lora_B.weight` `[out, r]`). */
export function loraTensorNames(layer: number, module: LoraTargetModule): { a: string; b: string } {
  const path = loraModulePath(layer, module);
  return { a: `${path}.lora_A.weight`, b: `${path}.lora_B.weight` };
}

/** Every adapter tensor of `settings` on `config`'s decoder with its shape, in layer then module order. */
export function loraTensorShapes(config: DecoderConfig, settings: LoraSettings): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (let layer = 0; layer < config.numLayers; layer++) {
    for (const module of LORA_TARGET_MODULES) {
      if (!settings.targetModules.includes(module)) continue;
      const [outDim, inDim] = loraModuleShape(config, module);
      const { a, b } = loraTensorNames(layer, module);
      out.set(a, [settings.rank, inDim]);
      out.set(b, [outDim, settings.rank]);
    }
  }
  return out;
}

/** `alpha / r`, the factor of the adapter's product (PEFT's `scaling` without rsLoRA). */
export function loraScaling(settings: LoraSettings): number {
  return settings.alpha / settings.rank;
}

/**
 * The base weights with the adapter merged in, as PEFT's `merge_and_unload` does: every targeted module's weight
 * becomes W + (alpha / r) B A (`[out, in]`); the other tensors are the base's own (shared, not copied). The product is
 * summed in float64 and rounded to float32 once, so the merged model's forward differs from the unmerged adapter's
 * only by float32 rounding.
 */
export function mergeLoraAdapter(
  config: DecoderConfig,
  base: ReadonlyMap<string, WeightTensor>,
  adapter: LoadedLoraAdapter,
): Map<string, WeightTensor> {
  const { settings, tensors } = adapter;
  const scaling = loraScaling(settings);
  const rank = settings.rank;
  const merged = new Map(base);
  for (let layer = 0; layer < config.numLayers; layer++) {
    for (const module of settings.targetModules) {
      const [outDim, inDim] = loraModuleShape(config, module);
      const name = `${loraModulePath(layer, module)}.weight`;
      const w = base.get(name);
      if (!w || w.shape[0] !== outDim || w.shape[1] !== inDim) throw new TensorShapeError(name, [outDim, inDim], w?.shape);
      const names = loraTensorNames(layer, module);
      const a = tensors.get(names.a)!.data;
      const b = tensors.get(names.b)!.data;
      const data = new Float32Array(outDim * inDim);
      for (let o = 0; o < outDim; o++) {
        for (let i = 0; i < inDim; i++) {
          let sum = 0;
          for (let k = 0; k < rank; k++) sum += b[o * rank + k]! * a[k * inDim + i]!;
          data[o * inDim + i] = w.data[o * inDim + i]! + scaling * sum;
        }
      }
      merged.set(name, { shape: [outDim, inDim], data });
    }
  }
  return merged;
}

/**
 * A fresh adapter as PEFT initializes one (`reset_lora_parameters` with `init_lora_weights=True`): A by
 * `kaiming_uniform_(a=sqrt(5))`, which is uniform in +-1/sqrt(in_features), and B zeros, so the adapted model starts
 * equal to the base.
 */
export function initLoraAdapter(config: DecoderConfig, settings: LoraSettings, rng: SeededRandom): Map<string, WeightTensor> {
  const out = new Map<string, WeightTensor>();
  for (const [name, shape] of loraTensorShapes(config, settings)) {
    const data = new Float32Array(shape[0]! * shape[1]!);
    if (name.endsWith('.lora_A.weight')) {
      const bound = 1 / Math.sqrt(shape[1]!);
      for (let i = 0; i < data.length; i++) data[i] = (rng.uniform() * 2 - 1) * bound;
    }
    out.set(name, { shape, data });
  }
  return out;
}

/** The `adapter_config.json` PEFT writes for a LoRA adapter of these settings (the keys `LoraConfig` reads). */
export function peftAdapterConfig(settings: LoraSettings, baseModel: string | null): Record<string, unknown> {
  return {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    base_model_name_or_path: baseModel,
    r: settings.rank,
    lora_alpha: settings.alpha,
    lora_dropout: settings.dropout,
    target_modules: [...settings.targetModules],
    bias: 'none',
    fan_in_fan_out: false,
    use_rslora: false,
    use_dora: false,
    init_lora_weights: true,
    inference_mode: true,
    modules_to_save: null,
  };
}

/**
 * The files of a PEFT adapter folder, `adapter_config.json` and `adapter_model.safetensors` (float32, PEFT's key
 * names), each under `folder/` (for `saveCheckpoint`'s extra files), so that `PeftModel.from_pretrained(base,
 * folder)` loads the adapter.
 */
export function loraAdapterFiles(
  folder: string,
  settings: LoraSettings,
  tensors: ReadonlyMap<string, WeightTensor>,
  baseModel: string | null = null,
): Record<string, string | Uint8Array> {
  const named = new Map([...tensors].map(([name, t]) => [PEFT_PREFIX + name, t]));
  return {
    [join(folder, ADAPTER_CONFIG_FILE)]: JSON.stringify(peftAdapterConfig(settings, baseModel), null, 2) + '\n',
    [join(folder, ADAPTER_WEIGHTS_FILE)]: serializeSafetensors(named, { dtype: 'F32' }),
  };
}

/** A LoRA adapter read from a PEFT folder. */
export interface LoadedLoraAdapter {
  settings: LoraSettings;
  tensors: Map<string, WeightTensor>;
}

/**
 * Reads a PEFT LoRA adapter folder for `config`'s decoder: its settings from `adapter_config.json` and every tensor
 * those settings need from `adapter_model.safetensors`, each checked for shape (keys with or without PEFT's
 * `base_model.model.` prefix).
 */
export async function loadLoraAdapter(dir: string, config: DecoderConfig): Promise<LoadedLoraAdapter> {
  const configFile = join(dir, ADAPTER_CONFIG_FILE);
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(await readFile(configFile, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new CheckpointError(configFile, `cannot read the adapter config: ${(err as Error).message}`, adapterHint);
  }
  if (json.peft_type !== 'LORA')
    throw new CheckpointError(configFile, `peft_type is ${JSON.stringify(json.peft_type)}, expected "LORA"`, adapterHint);
  const modules = Array.isArray(json.target_modules) ? (json.target_modules as unknown[]) : [];
  const unknown = modules.filter((m) => typeof m !== 'string' || !isLoraTargetModule(m));
  if (modules.length === 0 || unknown.length > 0) {
    throw new CheckpointError(
      configFile,
      `target_modules must be a list of ${LORA_TARGET_MODULES.join(', ')}; found ${JSON.stringify(json.target_modules)}`,
      adapterHint,
    );
  }
  const rank = json.r;
  const alpha = json.lora_alpha;
  if (typeof rank !== 'number' || !Number.isInteger(rank) || rank < 1 || typeof alpha !== 'number') {
    throw new CheckpointError(
      configFile,
      `r must be a positive integer and lora_alpha a number (found ${JSON.stringify(rank)}, ${JSON.stringify(alpha)})`,
      adapterHint,
    );
  }
  const settings: LoraSettings = {
    rank,
    alpha,
    dropout: typeof json.lora_dropout === 'number' ? json.lora_dropout : 0,
    targetModules: modules as LoraTargetModule[],
  };
  const { tensors: stored } = await readSafetensors(join(dir, ADAPTER_WEIGHTS_FILE));
  const tensors = new Map<string, WeightTensor>();
  for (const [name, shape] of loraTensorShapes(config, settings)) {
    const found = stored.get(PEFT_PREFIX + name) ?? stored.get(name);
    if (!found || found.shape.length !== 2 || found.shape[0] !== shape[0] || found.shape[1] !== shape[1]) {
      throw new TensorShapeError(PEFT_PREFIX + name, shape, found?.shape);
    }
    tensors.set(name, { shape, data: Float32Array.from(found.data) });
  }
  return { settings, tensors };
}

const adapterHint = 'a LoRA adapter folder holds adapter_config.json and adapter_model.safetensors as PEFT save_pretrained writes them';
