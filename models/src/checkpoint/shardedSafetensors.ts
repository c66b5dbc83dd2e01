/**
 * Sharded safetensors checkpoints as transformers writes them: `model-00001-of-00003.safetensors` ... plus
 * `model.safetensors.index.json` = `{metadata: {total_size}, weight_map: {tensor: shard file}}`.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { SafetensorsError } from './errors.js';
import {
  readSafetensorsHeader,
  SafetensorsReader,
  tensorByteSize,
  tensorEntries,
  writeSafetensors,
  type CheckpointTensor,
  type ReadSafetensorsOptions,
  type SafetensorsEntry,
  type SafetensorsHeader,
  type TensorInput,
  type TensorMapInput,
  type WritableDtype,
  type WriteSafetensorsOptions,
} from './safetensors.js';

export const SAFETENSORS_FILE = 'model.safetensors';
export const SAFETENSORS_INDEX_FILE = 'model.safetensors.index.json';

export interface SafetensorsIndex {
  metadata: { total_size: number } & Record<string, unknown>;
  weight_map: Record<string, string>;
}

/** The name transformers gives shard `index` (from 0) of `count`: `model-00001-of-00003.safetensors`. */
export function shardFileName(index: number, count: number, prefix = 'model'): string {
  const pad = (n: number) => String(n).padStart(5, '0');
  return `${prefix}-${pad(index + 1)}-of-${pad(count)}.safetensors`;
}

/** One shard of a plan: its file name and its tensors. */
export interface PlannedShard {
  file: string;
  tensors: [string, TensorInput][];
}

/**
 * Tensors (sorted by name) packed greedily into shards of at most `maxShardSize` bytes of data, as transformers'
 * `save_pretrained` does; a single tensor larger than that gets a shard of its own. Always at least one shard. Shards
 * are named `<prefix>-0000i-of-0000N.safetensors`, and `index` maps every tensor to its shard (the index file's
 * contents when there is more than one).
 */
export function planShards(
  file: string,
  tensors: TensorMapInput,
  dtype: WritableDtype,
  maxShardSize: number,
  prefix = 'model',
): { shards: PlannedShard[]; index: SafetensorsIndex } {
  if (!(maxShardSize > 0)) {
    throw new SafetensorsError(
      file,
      `maxShardSize must be a positive number of bytes, got ${maxShardSize}`,
      undefined,
      'e.g. maxShardSize: 5e9 for 5 GB shards',
    );
  }
  const groups: [string, TensorInput][][] = [];
  let current: [string, TensorInput][] = [];
  let currentSize = 0;
  let totalSize = 0;
  for (const entry of tensorEntries(tensors)) {
    const size = tensorByteSize(entry[1], dtype);
    if (current.length > 0 && currentSize + size > maxShardSize) {
      groups.push(current);
      current = [];
      currentSize = 0;
    }
    current.push(entry);
    currentSize += size;
    totalSize += size;
  }
  if (current.length > 0 || groups.length === 0) groups.push(current);
  const shards = groups.map((group, i) => ({ file: shardFileName(i, groups.length, prefix), tensors: group }));
  const index: SafetensorsIndex = { metadata: { total_size: totalSize }, weight_map: {} };
  for (const shard of shards) for (const [name] of shard.tensors) index.weight_map[name] = shard.file;
  return { shards, index };
}

export async function readSafetensorsIndex(indexFile: string): Promise<SafetensorsIndex> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(indexFile, 'utf8'));
  } catch (err) {
    throw new SafetensorsError(indexFile, `cannot read the shard index: ${(err as Error).message}`);
  }
  const weightMap = (json as { weight_map?: unknown } | null)?.weight_map;
  if (weightMap === null || typeof weightMap !== 'object' || Array.isArray(weightMap)) {
    throw new SafetensorsError(indexFile, 'the shard index has no "weight_map" object');
  }
  for (const [name, shard] of Object.entries(weightMap as Record<string, unknown>)) {
    if (typeof shard !== 'string' || shard.includes('/') || shard.includes('\\') || shard === '..') {
      throw new SafetensorsError(indexFile, `weight_map entry ${JSON.stringify(shard)} is not a shard file name`, name);
    }
  }
  const metadata = (json as { metadata?: unknown }).metadata;
  return {
    metadata: (metadata !== null && typeof metadata === 'object' ? metadata : { total_size: 0 }) as SafetensorsIndex['metadata'],
    weight_map: weightMap as Record<string, string>,
  };
}

/**
 * Reads every tensor named in a `model.safetensors.index.json`, opening each shard once. Fails when a tensor of
 * the weight map is absent from its shard.
 */
export async function readShardedSafetensors(
  indexFile: string,
  options: ReadSafetensorsOptions = {},
): Promise<Map<string, CheckpointTensor>> {
  const index = await readSafetensorsIndex(indexFile);
  const byShard = new Map<string, string[]>();
  for (const [name, shard] of Object.entries(index.weight_map)) {
    if (options.filter && !options.filter(name)) continue;
    const names = byShard.get(shard) ?? [];
    names.push(name);
    byShard.set(shard, names);
  }
  const dir = dirname(indexFile);
  const tensors = new Map<string, CheckpointTensor>();
  for (const shard of [...byShard.keys()].sort()) {
    const reader = await SafetensorsReader.open(join(dir, shard));
    try {
      for (const name of byShard.get(shard)!) {
        if (!reader.header.tensors.has(name)) {
          throw new SafetensorsError(
            reader.header.file,
            `${basename(indexFile)} maps this tensor to the shard, but the shard does not hold it`,
            name,
          );
        }
        tensors.set(name, await reader.readTensor(name));
      }
    } finally {
      await reader.close();
    }
  }
  return tensors;
}

/** The header entry of every tensor named in a `model.safetensors.index.json` (shape and dtype, no data read). */
export async function readShardedSafetensorsHeaders(indexFile: string): Promise<Map<string, SafetensorsEntry>> {
  const index = await readSafetensorsIndex(indexFile);
  const dir = dirname(indexFile);
  const headers = new Map<string, SafetensorsHeader>();
  const entries = new Map<string, SafetensorsEntry>();
  for (const [name, shard] of Object.entries(index.weight_map)) {
    let header = headers.get(shard);
    if (header === undefined) headers.set(shard, (header = await readSafetensorsHeader(join(dir, shard))));
    const entry = header.tensors.get(name);
    if (entry === undefined) {
      throw new SafetensorsError(header.file, `${basename(indexFile)} maps this tensor to the shard, but the shard does not hold it`, name);
    }
    entries.set(name, entry);
  }
  return entries;
}

export interface ShardedWriteOptions extends WriteSafetensorsOptions {
  /** Largest shard in bytes of tensor data; a single tensor larger than this gets a shard of its own. */
  maxShardSize: number;
}

export interface ShardedWriteResult {
  /** Files written, relative to the folder: shards (and the index when there is more than one shard). */
  files: string[];
  totalSize: number;
}

/**
 * Writes tensors into `dir`, greedily packing them (sorted by name) into shards of at most `maxShardSize` bytes.
 * Like transformers, a checkpoint that fits one shard is written as plain `model.safetensors` with no index.
 */
export async function writeShardedSafetensors(
  dir: string,
  tensors: TensorMapInput,
  options: ShardedWriteOptions,
): Promise<ShardedWriteResult> {
  const { shards, index } = planShards(dir, tensors, options.dtype ?? 'F32', options.maxShardSize);
  const totalSize = index.metadata.total_size;
  if (shards.length === 1) {
    await writeSafetensors(join(dir, SAFETENSORS_FILE), new Map(shards[0]!.tensors), options);
    return { files: [SAFETENSORS_FILE], totalSize };
  }
  for (const shard of shards) await writeSafetensors(join(dir, shard.file), new Map(shard.tensors), options);
  await writeFile(join(dir, SAFETENSORS_INDEX_FILE), JSON.stringify(index, null, 2) + '\n');
  return { files: [...shards.map((shard) => shard.file), SAFETENSORS_INDEX_FILE], totalSize };
}
