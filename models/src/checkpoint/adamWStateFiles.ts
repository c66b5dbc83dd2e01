import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { OptimizerSettings } from '@drmas/core';
import { OptimizerStateError } from './errors.js';
import { readSafetensors, serializeSafetensors } from './safetensors.js';

/**
 * AdamW's state in a checkpoint folder, one format for every backend so that a run resumes on another:
 * `optimizer.safetensors` holds `<param>.exp_avg` and `<param>.exp_avg_sq` (float32, the parameter's shape) and
 * `optimizer.json` is `{ type: 'adamw', step, settings }` (torch's `state['step']` and the settings of the latest
 * update).
 */
export const OPTIMIZER_STATE_FILE = 'optimizer.safetensors';
export const OPTIMIZER_META_FILE = 'optimizer.json';

/** One parameter's first and second moments, flat float32 in the parameter's layout. */
export interface AdamWMoments {
  expAvg: Float32Array;
  expAvgSq: Float32Array;
}

/** AdamW's state as saved: the step count, the moments by parameter name, and the settings saved with them. */
export interface AdamWState {
  step: number;
  moments: Map<string, AdamWMoments>;
  settings?: OptimizerSettings;
}

/**
 * The contents of `optimizer.safetensors` and `optimizer.json` (for `saveCheckpoint`'s extra files): the moments of
 * each parameter of `moments` with the shape `shapeOf` gives it.
 */
export function serializeAdamWState(
  step: number,
  moments: Iterable<[string, AdamWMoments]>,
  shapeOf: (name: string) => readonly number[],
  settings: OptimizerSettings | undefined,
): Record<string, string | Uint8Array> {
  const tensors = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const [name, m] of moments) {
    const shape = [...shapeOf(name)];
    tensors.set(`${name}.exp_avg`, { shape, data: m.expAvg });
    tensors.set(`${name}.exp_avg_sq`, { shape, data: m.expAvgSq });
  }
  return {
    [OPTIMIZER_STATE_FILE]: serializeSafetensors(tensors, { dtype: 'F32' }),
    [OPTIMIZER_META_FILE]: JSON.stringify({ type: 'adamw', step, settings: settings ?? null }, null, 2) + '\n',
  };
}

/** Whether `dir` holds an optimizer state (its `optimizer.json`). */
export function hasAdamWState(dir: string): Promise<boolean> {
  return access(join(dir, OPTIMIZER_META_FILE)).then(
    () => true,
    () => false,
  );
}

/**
 * The state saved in `dir` for the parameters `params` (name -> shape): moments of parameters the file lacks are
 * left out (a parameter never updated); moments missing one half or of another size are an `OptimizerStateError`.
 */
export async function readAdamWState(dir: string, params: Iterable<[string, readonly number[]]>): Promise<AdamWState> {
  const metaFile = join(dir, OPTIMIZER_META_FILE);
  let meta: { step?: unknown; settings?: OptimizerSettings | null };
  try {
    meta = JSON.parse(await readFile(metaFile, 'utf8')) as typeof meta;
  } catch (err) {
    throw new OptimizerStateError(metaFile, `cannot read optimizer state: ${(err as Error).message}`);
  }
  if (typeof meta.step !== 'number') throw new OptimizerStateError(metaFile, "missing numeric 'step'");
  const stateFile = join(dir, OPTIMIZER_STATE_FILE);
  const { tensors } = await readSafetensors(stateFile);
  const moments = new Map<string, AdamWMoments>();
  for (const [name, shape] of params) {
    const size = shape.reduce((a, b) => a * b, 1);
    const a = tensors.get(`${name}.exp_avg`);
    const b = tensors.get(`${name}.exp_avg_sq`);
    if (!a && !b) continue;
    if (!a || !b || a.data.length !== size || b.data.length !== size) {
      throw new OptimizerStateError(stateFile, `moments of '${name}' are missing or do not match shape [${shape.join(', ')}]`);
    }
    moments.set(name, { expAvg: Float32Array.from(a.data), expAvgSq: Float32Array.from(b.data) });
  }
  return { step: meta.step, moments, settings: meta.settings ?? undefined };
}
