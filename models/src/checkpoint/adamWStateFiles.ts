import { access, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { OptimizerSettings } from '@drmas/core';
import { OptimizerStateError, SafetensorsError } from './errors.js';
import type { CheckpointFileContents } from './checkpointDirectory.js';
import { readSafetensors, safetensorsChunks, serializeSafetensors, type CheckpointTensor } from './safetensors.js';
import { planShards, readShardedSafetensors } from './shardedSafetensors.js';

/**
 * AdamW's state in a checkpoint folder, one format for every backend so that a run resumes on another:
 * `optimizer.safetensors` holds `<param>.exp_avg` and `<param>.exp_avg_sq` (float32, the parameter's shape) and
 * `optimizer.json` is `{ type: 'adamw', step, settings }` (torch's `state['step']` and the settings of the latest
 * update). A state of more than `maxShardSize` bytes (default 2 GiB: one Node buffer holds at most 4 GiB) is
 * sharded as transformers shards weights: `optimizer-00001-of-00003.safetensors` ... and
 * `optimizer.safetensors.index.json` (`{ metadata: { total_size }, weight_map: { tensor: shard file } }`).
 */
export const OPTIMIZER_STATE_FILE = 'optimizer.safetensors';
export const OPTIMIZER_STATE_INDEX_FILE = 'optimizer.safetensors.index.json';
export const OPTIMIZER_META_FILE = 'optimizer.json';
/** Default largest optimizer shard, in bytes of tensor data. */
export const OPTIMIZER_MAX_SHARD_SIZE = 2 ** 31;

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
 * The contents of `optimizer.safetensors` (or its shards and index) and `optimizer.json` (for `saveCheckpoint`'s
 * extra files): the moments of each parameter of `moments` with the shape `shapeOf` gives it. A single file is bytes,
 * as before; shards are `safetensorsChunks`, views of the moments written piece by piece, never one buffer.
 */
export function serializeAdamWState(
  step: number,
  moments: Iterable<[string, AdamWMoments]>,
  shapeOf: (name: string) => readonly number[],
  settings: OptimizerSettings | undefined,
  maxShardSize = OPTIMIZER_MAX_SHARD_SIZE,
): Record<string, CheckpointFileContents> {
  const tensors = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const [name, m] of moments) {
    const shape = [...shapeOf(name)];
    tensors.set(`${name}.exp_avg`, { shape, data: m.expAvg });
    tensors.set(`${name}.exp_avg_sq`, { shape, data: m.expAvgSq });
  }
  const files: Record<string, CheckpointFileContents> = {};
  const { shards, index } = planShards(OPTIMIZER_STATE_FILE, tensors, 'F32', maxShardSize, 'optimizer');
  if (shards.length === 1) {
    files[OPTIMIZER_STATE_FILE] = serializeSafetensors(tensors, { dtype: 'F32' });
  } else {
    for (const shard of shards) files[shard.file] = safetensorsChunks(new Map(shard.tensors), { dtype: 'F32' });
    files[OPTIMIZER_STATE_INDEX_FILE] = JSON.stringify(index, null, 2) + '\n';
  }
  files[OPTIMIZER_META_FILE] = JSON.stringify({ type: 'adamw', step, settings: settings ?? null }, null, 2) + '\n';
  return files;
}

/** The moment tensors saved in `dir`: from the shards its index names when there is one, else `optimizer.safetensors`. */
async function readMomentTensors(dir: string): Promise<{ file: string; tensors: Map<string, CheckpointTensor> }> {
  const indexFile = join(dir, OPTIMIZER_STATE_INDEX_FILE);
  const sharded = await access(indexFile).then(
    () => true,
    () => false,
  );
  const file = sharded ? indexFile : join(dir, OPTIMIZER_STATE_FILE);
  try {
    return { file, tensors: sharded ? await readShardedSafetensors(indexFile) : (await readSafetensors(file)).tensors };
  } catch (err) {
    if (!(err instanceof SafetensorsError)) throw err;
    throw new OptimizerStateError(
      err.file,
      `optimizer state file ${basename(err.file)} is missing or damaged: ${err.message}`,
      'save the checkpoint again with its optimizer state, or resume without it',
    );
  }
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
  const { file: stateFile, tensors } = await readMomentTensors(dir);
  const moments = new Map<string, AdamWMoments>();
  for (const [name, shape] of params) {
    const size = shape.reduce((a, b) => a * b, 1);
    const a = tensors.get(`${name}.exp_avg`);
    const b = tensors.get(`${name}.exp_avg_sq`);
    if (!a && !b) continue;
    if (!a || !b || a.data.length !== size || b.data.length !== size) {
      throw new OptimizerStateError(stateFile, `moments of '${name}' are missing or do not match shape [${shape.join(', ')}]`);
    }
    moments.set(name, { expAvg: a.data, expAvgSq: b.data });
  }
  return { step: meta.step, moments, settings: meta.settings ?? undefined };
}
