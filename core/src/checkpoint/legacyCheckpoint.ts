import { open, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { checkpointError, parseCheckpointJson } from './checkpointLayout.js';

async function readJson(file: string): Promise<unknown> {
  const text = await readFile(file, 'utf8').catch((error: Error) => {
    throw checkpointError(file, `cannot read the checkpoint: ${error.message}`, 'check that the checkpoint folder is readable');
  });
  return parseCheckpointJson(file, text);
}

/**
 * What a safetensors file's own header promises: `8 + header length + the end of its last tensor` bytes. Core reads
 * only this much of the format (the readers live in @drmas/models, which depends on core) to check, without a
 * manifest, that a file is whole.
 */
export async function checkSafetensorsSize(file: string): Promise<void> {
  const name = path.basename(file);
  const handle = await open(file, 'r').catch((error: Error) => {
    throw checkpointError(file, `cannot read ${name}: ${error.message}`);
  });
  try {
    const { size } = await handle.stat();
    if (size < 8) throw checkpointError(file, `${name} is truncated: ${size} bytes, shorter than its 8-byte header length`);
    const prefix = Buffer.alloc(8);
    await handle.read(prefix, 0, 8, 0);
    const headerLength = Number(prefix.readBigUInt64LE(0));
    if (8 + headerLength > size) {
      throw checkpointError(file, `${name} is truncated: its header alone needs ${8 + headerLength} bytes, found ${size}`);
    }
    const header = Buffer.alloc(headerLength);
    await handle.read(header, 0, headerLength, 8);
    const entries = parseCheckpointJson(file, header.toString('utf8'));
    let end = 0;
    for (const [key, entry] of Object.entries(entries as Record<string, { data_offsets?: unknown }>)) {
      if (key === '__metadata__') continue;
      const offsets = entry?.data_offsets;
      if (!Array.isArray(offsets) || typeof offsets[1] !== 'number')
        throw checkpointError(file, `${name}: tensor "${key}" has no data_offsets`);
      end = Math.max(end, offsets[1]);
    }
    const expected = 8 + headerLength + end;
    if (size < expected) throw checkpointError(file, `${name} is truncated: expected ${expected} bytes, found ${size}`);
    if (size > expected) throw checkpointError(file, `${name} has ${size} bytes but its header accounts for ${expected}`);
  } finally {
    await handle.close();
  }
}

/**
 * Checks a worker group's folder of a checkpoint written before manifests: config.json parses, the weights are
 * there (every shard the index lists), and every safetensors file is as long as its header says.
 */
export async function verifyLegacyModelFolder(folder: string): Promise<void> {
  const names = await readdir(folder);
  const config = path.join(folder, 'config.json');
  if (!names.includes('config.json')) throw checkpointError(config, `${path.basename(folder)}/config.json is missing`);
  await readJson(config);
  if (!names.some((n) => n === 'model.safetensors' || n === 'model.safetensors.index.json')) {
    throw checkpointError(path.join(folder, 'model.safetensors'), `${path.basename(folder)}/model.safetensors is missing`);
  }
  if (names.includes('model.safetensors.index.json')) {
    const indexFile = path.join(folder, 'model.safetensors.index.json');
    const index = (await readJson(indexFile)) as { weight_map?: Record<string, unknown> };
    for (const shard of new Set(Object.values(index.weight_map ?? {}))) {
      if (typeof shard === 'string' && !names.includes(shard)) {
        throw checkpointError(
          path.join(folder, shard),
          `${path.basename(folder)}/${shard} is missing (model.safetensors.index.json lists it)`,
        );
      }
    }
  }
  for (const name of names.filter((n) => n.endsWith('.safetensors')).sort()) await checkSafetensorsSize(path.join(folder, name));
}
