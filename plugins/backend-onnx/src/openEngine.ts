import type { PolicyBackend } from '@drmas/core';
import { createOnnxPolicyBackend } from './OnnxPolicyBackend.js';
import type { ProviderRequest } from './ExecutionProvider.js';
import { createTfjsPolicyBackend, type ArchitectureName } from './tfjsBackend.js';
import { OnnxRequestError } from './OnnxBackendErrors.js';

export type EngineName = 'onnx' | 'tfjs';
export const ENGINE_NAMES: readonly EngineName[] = ['onnx', 'tfjs'];

export interface OpenEngineOptions {
  /** `tiny`, `small` or a Hugging Face checkpoint folder. */
  model: string;
  /** Initialisation seed of a built-in model (default 0): both engines get identical weights for one seed. */
  seed?: number;
  /** Architecture of a built-in model (default Qwen2ForCausalLM). */
  architecture?: ArchitectureName;
  /** onnx: execution provider (`cpu`, `cuda`, `auto`; default `auto`). */
  provider?: ProviderRequest;
  /** tfjs: runtime (`auto`, `wasm`, `cpu`, `tfjs-node`, `tfjs-node-gpu`; default `auto`). */
  runtime?: string;
  /** Where the onnx engine's CUDA fallback warning goes (default `console.warn`). */
  warn?: (message: string) => void;
}

/**
 * The engine behind `drmas score --engine` and `drmas generate --engine`: the onnx or the tfjs backend for the
 * same model. The caller disposes it.
 */
export async function openEngine(engine: EngineName, options: OpenEngineOptions): Promise<PolicyBackend> {
  switch (engine) {
    case 'onnx':
      return createOnnxPolicyBackend({
        model: options.model,
        seed: options.seed,
        architecture: options.architecture,
        provider: options.provider,
        warn: options.warn,
      });
    case 'tfjs':
      return createTfjsPolicyBackend({
        model: options.model,
        seed: options.seed,
        architecture: options.architecture,
        runtime: options.runtime,
      });
    default:
      throw new OnnxRequestError(`--engine: unknown engine ${JSON.stringify(engine)}; use ${ENGINE_NAMES.join(' or ')}`);
  }
}
