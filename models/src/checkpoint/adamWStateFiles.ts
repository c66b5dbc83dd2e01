import { access, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { MomentPrecision, OptimizerSettings } from '@drmas/core';
import { CheckpointReader } from './CheckpointReader.js';
import { OptimizerStateError, SafetensorsError } from './errors.js';
import {
  blockCount,
  dequantizeBlockwise,
  dynamicMap,
  emptyBlockwiseCodes,
  holdsBlockwise,
  quantizeBlockwise,
  type BlockwiseCodes,
} from '../optimizer/blockwise8bit.js';
import type { CheckpointFileContents } from './checkpointDirectory.js';
import { elementCount, safetensorsChunks, serializeSafetensors, type TensorInput } from './safetensors.js';
import { planShards } from './shardedSafetensors.js';

/**
 * AdamW's state in a checkpoint folder, one format for every backend so that a run resumes on another:
 * `optimizer.safetensors` holds `<param>.exp_avg` and `<param>.exp_avg_sq` (float32, the parameter's shape) and
 * `optimizer.json` is `{ type: 'adamw', step, settings }` (torch's `state['step']` and the settings of the latest
 * update). Moments kept in 8 bits (`optimizer.moments: 8bit`) are saved as they are held: `<param>.exp_avg` as U8 map
 * indices in the parameter's shape and `<param>.exp_avg.absmax` (float32, one a block of 256; likewise `exp_avg_sq`),
 * and either form is read as either (`readAdamWState`'s `precision`). A state of more than `maxShardSize` bytes
 * (default 2 GiB: one Node buffer holds at most 4 GiB) is sharded as transformers shards weights:
 * `optimizer-00001-of-00003.safetensors` ... and `optimizer.safetensors.index.json` (`{ metadata: { total_size },
 * weight_map: { tensor: shard file } }`).
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

/** One parameter's moments in 8 bits: the first on the signed dynamic map, the second on the unsigned one. */
export interface BlockwiseAdamWMoments {
  expAvg: BlockwiseCodes;
  expAvgSq: BlockwiseCodes;
}

/** A parameter's moments as an optimizer holds them. */
export type HeldAdamWMoments = AdamWMoments | BlockwiseAdamWMoments;

export function isBlockwise(moments: HeldAdamWMoments): moments is BlockwiseAdamWMoments {
  return !(moments.expAvg instanceof Float32Array);
}

/** A fresh parameter's moments, zero, held as `precision` asks for a tensor of `size` values (8-bit ones made as codes, never a float32 copy). */
export function zeroMoments(size: number, precision: MomentPrecision): HeldAdamWMoments {
  if (holdsBlockwise(size, precision)) return { expAvg: emptyBlockwiseCodes(size), expAvgSq: emptyBlockwiseCodes(size) };
  return { expAvg: new Float32Array(size), expAvgSq: new Float32Array(size) };
}

/** `moments` held as `precision` asks for a tensor of its size: itself, or a converted copy. */
export function momentsIn(moments: HeldAdamWMoments, precision: MomentPrecision): HeldAdamWMoments {
  const size = isBlockwise(moments) ? moments.expAvg.codes.length : moments.expAvg.length;
  const blockwise = holdsBlockwise(size, precision);
  if (blockwise === isBlockwise(moments)) return moments;
  if (isBlockwise(moments)) {
    const expAvg = new Float32Array(size);
    const expAvgSq = new Float32Array(size);
    dequantizeBlockwise(moments.expAvg, dynamicMap(true), expAvg, 0);
    dequantizeBlockwise(moments.expAvgSq, dynamicMap(false), expAvgSq, 0);
    return { expAvg, expAvgSq };
  }
  const codes = (values: Float32Array, signed: boolean): BlockwiseCodes => {
    const out = emptyBlockwiseCodes(size);
    quantizeBlockwise(values, dynamicMap(signed), out, 0);
    return out;
  };
  return { expAvg: codes(moments.expAvg, true), expAvgSq: codes(moments.expAvgSq, false) };
}

/** AdamW's state as saved: the step count, the moments by parameter name, and the settings saved with them. */
export interface AdamWState<M extends HeldAdamWMoments = AdamWMoments> {
  step: number;
  moments: Map<string, M>;
  settings?: OptimizerSettings;
}

/**
 * The contents of `optimizer.safetensors` (or its shards and index) and `optimizer.json` (for `saveCheckpoint`'s
 * extra files): the moments of each parameter of `moments` with the shape `shapeOf` gives it. A single file is bytes,
 * as before; shards are `safetensorsChunks`, views of the moments written piece by piece, never one buffer.
 */
export function serializeAdamWState(
  step: number,
  moments: Iterable<[string, HeldAdamWMoments]>,
  shapeOf: (name: string) => readonly number[],
  settings: OptimizerSettings | undefined,
  maxShardSize = OPTIMIZER_MAX_SHARD_SIZE,
): Record<string, CheckpointFileContents> {
  const tensors = new Map<string, TensorInput>();
  for (const [name, m] of moments) {
    const shape = [...shapeOf(name)];
    if (isBlockwise(m)) {
      for (const [key, held] of [
        ['exp_avg', m.expAvg],
        ['exp_avg_sq', m.expAvgSq],
      ] as const) {
        tensors.set(`${name}.${key}`, { shape, data: held.codes, dtype: 'U8' });
        tensors.set(`${name}.${key}.absmax`, { shape: [held.absmax.length], data: held.absmax });
      }
      continue;
    }
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

/** The state's tensors in `dir`, read one at a time: from the shards its index names when there is one, else `optimizer.safetensors`. */
async function openMomentTensors(dir: string): Promise<{ file: string; reader: CheckpointReader }> {
  const present = (file: string) =>
    access(file).then(
      () => true,
      () => false,
    );
  const indexFile = join(dir, OPTIMIZER_STATE_INDEX_FILE);
  const file = (await present(indexFile)) ? indexFile : join(dir, OPTIMIZER_STATE_FILE);
  if (!(await present(file))) throw damagedStateError(file, 'the file does not exist');
  return {
    file,
    reader: await damagedAsStateError(CheckpointReader.open(dir, { single: OPTIMIZER_STATE_FILE, index: OPTIMIZER_STATE_INDEX_FILE })),
  };
}

function damagedStateError(file: string, reason: string): OptimizerStateError {
  return new OptimizerStateError(
    file,
    `optimizer state file ${basename(file)} is missing or damaged: ${reason}`,
    'save the checkpoint again with its optimizer state, or resume without it',
  );
}

/** A state file that cannot be read (a shard missing, truncated, not safetensors) as an `OptimizerStateError` naming it. */
async function damagedAsStateError<T>(reading: Promise<T>): Promise<T> {
  try {
    return await reading;
  } catch (err) {
    if (err instanceof SafetensorsError) throw damagedStateError(err.file, err.message);
    throw err;
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
 * The moments come in float32 (the default, whatever the file holds), as `precision: '8bit'` holds them, or as the
 * file holds them (`'stored'`).
 */
export async function readAdamWState(dir: string, params: Iterable<[string, readonly number[]]>): Promise<AdamWState>;
export async function readAdamWState(
  dir: string,
  params: Iterable<[string, readonly number[]]>,
  precision: MomentPrecision | 'stored',
): Promise<AdamWState<HeldAdamWMoments>>;
export async function readAdamWState(
  dir: string,
  params: Iterable<[string, readonly number[]]>,
  precision: MomentPrecision | 'stored' = 'float32',
): Promise<AdamWState<HeldAdamWMoments>> {
  const metaFile = join(dir, OPTIMIZER_META_FILE);
  let meta: { step?: unknown; settings?: OptimizerSettings | null };
  try {
    meta = JSON.parse(await readFile(metaFile, 'utf8')) as typeof meta;
  } catch (err) {
    throw new OptimizerStateError(metaFile, `cannot read optimizer state: ${(err as Error).message}`);
  }
  if (typeof meta.step !== 'number') throw new OptimizerStateError(metaFile, "missing numeric 'step'");
  const { file: stateFile, reader } = await openMomentTensors(dir);
  const moments = new Map<string, HeldAdamWMoments>();
  try {
    for (const [name, shape] of params) {
      const size = shape.reduce((a, b) => a * b, 1);
      const [a, b] = [reader.entry(`${name}.exp_avg`), reader.entry(`${name}.exp_avg_sq`)];
      if (!a && !b) continue;
      if (!a || !b || elementCount(a.shape) !== size || elementCount(b.shape) !== size) {
        throw new OptimizerStateError(stateFile, `moments of '${name}' are missing or do not match shape [${shape.join(', ')}]`);
      }
      const held =
        a.dtype === 'U8' && b.dtype === 'U8'
          ? {
              expAvg: await savedCodes(stateFile, reader, `${name}.exp_avg`, size),
              expAvgSq: await savedCodes(stateFile, reader, `${name}.exp_avg_sq`, size),
            }
          : {
              expAvg: (await damagedAsStateError(reader.read(`${name}.exp_avg`))).data,
              expAvgSq: (await damagedAsStateError(reader.read(`${name}.exp_avg_sq`))).data,
            };
      moments.set(name, precision === 'stored' ? held : momentsIn(held, precision));
    }
  } finally {
    await reader.close();
  }
  return { step: meta.step, moments, settings: meta.settings ?? undefined };
}

/** The 8-bit codes saved as `key` (U8, kept a byte a value) and its `key.absmax`. */
async function savedCodes(file: string, reader: CheckpointReader, key: string, size: number): Promise<BlockwiseCodes> {
  const absmax = reader.entry(`${key}.absmax`);
  if (!absmax || elementCount(absmax.shape) !== blockCount(size)) {
    throw new OptimizerStateError(
      file,
      `'${key}' holds 8-bit codes but '${key}.absmax' is missing or not ${blockCount(size)} values (one a block of 256)`,
    );
  }
  return {
    codes: await damagedAsStateError(reader.readStored(key)),
    absmax: (await damagedAsStateError(reader.read(`${key}.absmax`))).data,
  };
}
