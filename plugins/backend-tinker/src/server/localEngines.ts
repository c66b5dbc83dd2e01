import { createOnnxPolicyBackend, loadOnnxRuntime } from '@drmas/plugin-backend-onnx';
import { createTfjsPolicyBackend } from '@drmas/plugin-backend-tfjs';
import type { EngineFactory } from './TrainingModels.js';

export const LOCAL_ENGINES = ['auto', 'onnx', 'tfjs'] as const;
export type LocalEngine = (typeof LOCAL_ENGINES)[number];

/**
 * Opens models on one of drmas's own engines: onnx (onnxruntime-node; `auto` takes it where it loads, as
 * `models.<id>.backend: auto` does on a CPU) or tfjs. A built-in model is initialised from `seed`.
 */
export async function localEngineFactory(
  engine: LocalEngine,
  options: { seed: number; log: (message: string) => void },
): Promise<{ name: 'onnx' | 'tfjs'; open: EngineFactory }> {
  let name: 'onnx' | 'tfjs' = engine === 'auto' ? 'onnx' : engine;
  if (engine === 'auto') {
    try {
      await loadOnnxRuntime();
    } catch (error) {
      options.log(`onnxruntime-node does not load (${(error as Error).message}); models train on tfjs`);
      name = 'tfjs';
    }
  }
  let opened = 0;
  const open: EngineFactory = (model) =>
    name === 'onnx'
      ? createOnnxPolicyBackend({ name: `onnx:tinker-${++opened}`, model, seed: options.seed, warn: (m) => options.log(`warning: ${m}`) })
      : createTfjsPolicyBackend({ name: `tfjs:tinker-${++opened}`, model, seed: options.seed });
  return { name, open };
}
