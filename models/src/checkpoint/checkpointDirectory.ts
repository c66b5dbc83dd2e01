/**
 * A Hugging Face style checkpoint folder: config.json, model.safetensors (or shards + index),
 * generation_config.json and tokenizer files. Saving is atomic: files go to a hidden temporary sibling folder,
 * are fsynced, and the folder is renamed into place, so a reader never sees a half-written checkpoint. A training
 * checkpoint holds one such folder per worker group; its format (`trainer_state.json`, `manifest.json`, the step
 * folders) is core's `core/src/checkpoint/`.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, copyFile, mkdir, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { isProcessAlive } from '@drmas/core';
import { ADAPTER_CONFIG_FILE } from '../lora/loraAdapter.js';
import { CheckpointError, TensorShapeError } from './errors.js';
import { readSafetensors, tensorEntries, type CheckpointTensor, type TensorMapInput, type WritableDtype } from './safetensors.js';
import { readShardedSafetensors, SAFETENSORS_FILE, SAFETENSORS_INDEX_FILE, writeShardedSafetensors } from './shardedSafetensors.js';

export const CONFIG_FILE = 'config.json';
export const GENERATION_CONFIG_FILE = 'generation_config.json';
/** Files of a Hugging Face tokenizer that are copied along when saving with `tokenizerDir`. */
export const TOKENIZER_FILES = [
  'tokenizer.json',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'added_tokens.json',
  'vocab.json',
  'merges.txt',
  'chat_template.jinja',
  'chat_template.json',
] as const;

export interface LoadedCheckpoint {
  dir: string;
  /** Parsed config.json. */
  config: Record<string, unknown>;
  tensors: Map<string, CheckpointTensor>;
  /** Parsed generation_config.json, when present. */
  generationConfig?: Record<string, unknown>;
  /** `dir` itself when it holds a tokenizer.json (pass it to `Tokenizer.fromDirectory`). */
  tokenizerDir?: string;
}

export interface LoadCheckpointOptions {
  /** Load only the tensors for which this returns true. */
  filter?: (name: string) => boolean;
}

/** Anything that can write its tokenizer files into a folder (the `Tokenizer` class does). */
export interface CheckpointTokenizer {
  save(dir: string): Promise<void>;
}

/**
 * A file to write into a checkpoint: text, bytes, or bytes in pieces (written one piece after another, for files
 * past one buffer's 4 GiB, e.g. `safetensorsChunks`).
 */
export type CheckpointFileContents = string | Uint8Array | Iterable<Uint8Array>;

export interface CheckpointContents {
  config: object;
  tensors: TensorMapInput;
  generationConfig?: object;
  tokenizer?: CheckpointTokenizer;
  /** A folder whose tokenizer files (see TOKENIZER_FILES) are copied, when `tokenizer` is not given. */
  tokenizerDir?: string;
  /** More files to write, by name relative to the checkpoint folder. */
  extraFiles?: Record<string, CheckpointFileContents>;
  /** Dtype of the weights on disk; default F32. */
  dtype?: WritableDtype;
  /** Split the weights into shards of at most this many bytes (transformers' `max_shard_size`). */
  maxShardSize?: number;
}

const TEMP_MARK = '.tmp-';
const OLD_MARK = '.old-';

/**
 * True for the hidden folders `saveCheckpoint` works in (`.name.tmp-<pid>-<random>`, `.name.old-<pid>-<random>`).
 * Code that lists checkpoints must skip these: they may be incomplete.
 */
export function isTemporaryCheckpointName(name: string): boolean {
  return name.startsWith('.') && (name.includes(TEMP_MARK) || name.includes(OLD_MARK));
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path, constants.F_OK);
    return true;
  } catch {
    return false;
  }
}

async function readJsonObject(file: string, what: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new CheckpointError(file, `cannot read ${what}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new CheckpointError(file, `${what} is not valid JSON: ${(err as Error).message}`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new CheckpointError(file, `${what} is not a JSON object`);
  return json as Record<string, unknown>;
}

export async function loadCheckpoint(dir: string, options: LoadCheckpointOptions = {}): Promise<LoadedCheckpoint> {
  const path = resolve(dir);
  if (isTemporaryCheckpointName(basename(path))) {
    throw new CheckpointError(path, 'this is the temporary folder of an unfinished checkpoint save; it must not be loaded');
  }
  if (!(await exists(path))) {
    const parent = dirname(path);
    const leftover = (await readdir(parent).catch(() => [] as string[])).find((n) => n.startsWith(`.${basename(path)}${OLD_MARK}`));
    const hint = leftover !== undefined ? `; a save was interrupted, the previous checkpoint is in ${join(parent, leftover)}` : '';
    throw new CheckpointError(path, `checkpoint folder does not exist${hint}`);
  }
  const configFile = join(path, CONFIG_FILE);
  if (!(await exists(configFile))) throw new CheckpointError(path, `no ${CONFIG_FILE}: not a Hugging Face style checkpoint folder`);
  const config = await readJsonObject(configFile, CONFIG_FILE);

  let tensors: Map<string, CheckpointTensor>;
  if (await exists(join(path, SAFETENSORS_INDEX_FILE))) {
    tensors = await readShardedSafetensors(join(path, SAFETENSORS_INDEX_FILE), options);
  } else if (await exists(join(path, SAFETENSORS_FILE))) {
    tensors = (await readSafetensors(join(path, SAFETENSORS_FILE), options)).tensors;
  } else {
    throw await noWeightsError(path);
  }

  const result: LoadedCheckpoint = { dir: path, config, tensors };
  const generationFile = join(path, GENERATION_CONFIG_FILE);
  if (await exists(generationFile)) result.generationConfig = await readJsonObject(generationFile, GENERATION_CONFIG_FILE);
  if (await exists(join(path, 'tokenizer.json'))) result.tokenizerDir = path;
  return result;
}

/** Removes temporary folders of earlier saves of `name` whose process has died. */
async function removeStaleTemporaries(parent: string, name: string): Promise<void> {
  const prefix = `.${name}${TEMP_MARK}`;
  for (const entry of await readdir(parent)) {
    if (!entry.startsWith(prefix)) continue;
    const pid = Number(entry.slice(prefix.length).split('-')[0]);
    if (Number.isInteger(pid) && pid !== process.pid && !isProcessAlive(pid)) {
      await rm(join(parent, entry), { recursive: true, force: true });
    }
  }
}

async function fsyncPath(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } catch (err) {
    // Some platforms (Windows) refuse fsync on folders; the rename still orders correctly there.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM' && (err as NodeJS.ErrnoException).code !== 'EISDIR') throw err;
  } finally {
    await fh.close();
  }
}

async function fsyncTree(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await fsyncTree(path);
    else if (entry.isFile()) await fsyncPath(path);
  }
  await fsyncPath(dir);
}

async function writeContents(tmp: string, contents: CheckpointContents): Promise<void> {
  await writeFile(join(tmp, CONFIG_FILE), JSON.stringify(contents.config, null, 2) + '\n');
  if (contents.generationConfig !== undefined) {
    await writeFile(join(tmp, GENERATION_CONFIG_FILE), JSON.stringify(contents.generationConfig, null, 2) + '\n');
  }
  // A LoRA group's checkpoint has no weights of its own (its base stays where it was loaded from): no empty weights file.
  if (tensorEntries(contents.tensors).length > 0)
    await writeShardedSafetensors(tmp, contents.tensors, {
      dtype: contents.dtype ?? 'F32',
      maxShardSize: contents.maxShardSize ?? Number.POSITIVE_INFINITY,
    });
  if (contents.tokenizer !== undefined) {
    await contents.tokenizer.save(tmp);
  } else if (contents.tokenizerDir !== undefined) {
    for (const file of TOKENIZER_FILES) {
      const source = join(contents.tokenizerDir, file);
      if (await exists(source)) await copyFile(source, join(tmp, file));
    }
  }
  for (const [name, data] of Object.entries(contents.extraFiles ?? {})) {
    const target = resolve(tmp, name);
    if (!target.startsWith(tmp + '/') && !target.startsWith(tmp + '\\')) {
      throw new CheckpointError(tmp, `extra file name "${name}" points outside the checkpoint folder`);
    }
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, data);
  }
}

/** An existing folder may be replaced by a save only when it is a checkpoint (or empty). */
async function looksReplaceable(path: string): Promise<boolean> {
  const entries = await readdir(path).catch(() => undefined);
  return entries !== undefined && (entries.length === 0 || entries.includes(CONFIG_FILE));
}

/**
 * Writes a checkpoint folder atomically: a crash leaves either the previous folder (or none) or the complete new
 * one, plus at worst a hidden `.name.tmp-*` folder that loaders ignore and the next save removes.
 */
export async function saveCheckpoint(dir: string, contents: CheckpointContents): Promise<void> {
  const path = resolve(dir);
  const parent = dirname(path);
  const name = basename(path);
  await mkdir(parent, { recursive: true });
  await removeStaleTemporaries(parent, name);

  const tag = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const tmp = join(parent, `.${name}${TEMP_MARK}${tag}`);
  await mkdir(tmp);
  try {
    await writeContents(tmp, contents);
    await fsyncTree(tmp);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }

  // rename() cannot replace a non-empty folder, so the previous checkpoint steps aside first.
  const old = join(parent, `.${name}${OLD_MARK}${tag}`);
  const replacing = await exists(path);
  if (replacing && !(await looksReplaceable(path))) {
    await rm(tmp, { recursive: true, force: true });
    throw new CheckpointError(
      path,
      `exists and is not a checkpoint folder (no ${CONFIG_FILE}); refusing to replace it, choose another folder`,
    );
  }
  if (replacing) await rename(path, old);
  try {
    await rename(tmp, path);
  } catch (err) {
    if (replacing) await rename(old, path);
    throw err;
  }
  await fsyncPath(parent);
  if (replacing) await rm(old, { recursive: true, force: true });
}

/**
 * The error for a folder without safetensors weights, saying what it holds instead: PyTorch pickles (not supported),
 * or a LoRA adapter (a LoRA agent's checkpoint, whose base stays where it was loaded from).
 */
export async function noWeightsError(dir: string): Promise<CheckpointError> {
  if (await exists(join(dir, ADAPTER_CONFIG_FILE))) {
    return new CheckpointError(
      dir,
      `is a LoRA adapter folder (${ADAPTER_CONFIG_FILE}) without base weights`,
      `merge it into its base as a model folder: drmas export --merge-lora ${dir} --out DIR (or continue the run with --resume)`,
    );
  }
  const hasBin = (await exists(join(dir, 'pytorch_model.bin'))) || (await exists(join(dir, 'pytorch_model.bin.index.json')));
  return new CheckpointError(
    dir,
    `no ${SAFETENSORS_FILE} or ${SAFETENSORS_INDEX_FILE}` +
      (hasBin ? '; pytorch_model.bin is not supported, re-save the model with safe_serialization=True' : ''),
  );
}

/**
 * The tensor `name`, checked to have `expectedShape`; throws a TensorShapeError naming the tensor and both shapes,
 * or saying it is missing.
 */
export function expectTensor(
  tensors: ReadonlyMap<string, CheckpointTensor>,
  name: string,
  expectedShape: readonly number[],
): CheckpointTensor {
  const tensor = tensors.get(name);
  if (tensor === undefined) throw new TensorShapeError(name, expectedShape, undefined);
  if (tensor.shape.length !== expectedShape.length || tensor.shape.some((d, i) => d !== expectedShape[i])) {
    throw new TensorShapeError(name, expectedShape, tensor.shape);
  }
  return tensor;
}
