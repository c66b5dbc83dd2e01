/**
 * Tensor-by-tensor access to a checkpoint folder's weights (single file or shards), so a model loader can convert
 * and release each tensor before reading the next instead of holding the whole checkpoint as float32.
 */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { noWeightsError } from './checkpointDirectory.js';
import { CheckpointError, SafetensorsError } from './errors.js';
import { SafetensorsReader, type CheckpointTensor, type SafetensorsEntry } from './safetensors.js';
import { readSafetensorsIndex, SAFETENSORS_FILE, SAFETENSORS_INDEX_FILE } from './shardedSafetensors.js';

export class CheckpointReader {
  private constructor(
    readonly dir: string,
    private readonly readers: Map<string, SafetensorsReader>,
    private readonly location: Map<string, SafetensorsReader>,
  ) {}

  /**
   * Opens the weights of `dir` (model.safetensors, or the shards named by model.safetensors.index.json), or the
   * tensors of another file and index of that form (`files`: the optimizer's state).
   */
  static async open(dir: string, files = { single: SAFETENSORS_FILE, index: SAFETENSORS_INDEX_FILE }): Promise<CheckpointReader> {
    const present = (file: string) =>
      access(join(dir, file), constants.F_OK).then(
        () => true,
        () => false,
      );
    const readers = new Map<string, SafetensorsReader>();
    const location = new Map<string, SafetensorsReader>();
    try {
      if (await present(files.index)) {
        const indexFile = join(dir, files.index);
        const index = await readSafetensorsIndex(indexFile);
        for (const [name, shard] of Object.entries(index.weight_map)) {
          let reader = readers.get(shard);
          if (reader === undefined) {
            reader = await SafetensorsReader.open(join(dir, shard));
            readers.set(shard, reader);
          }
          if (!reader.header.tensors.has(name)) {
            throw new SafetensorsError(
              reader.header.file,
              `${files.index} maps this tensor to the shard, but the shard does not hold it`,
              name,
            );
          }
          location.set(name, reader);
        }
      } else if (await present(files.single)) {
        const reader = await SafetensorsReader.open(join(dir, files.single));
        readers.set(files.single, reader);
        for (const name of reader.names) location.set(name, reader);
      } else {
        throw await noWeightsError(dir);
      }
    } catch (err) {
      for (const reader of readers.values()) await reader.close();
      throw err;
    }
    return new CheckpointReader(dir, readers, location);
  }

  get names(): string[] {
    return [...this.location.keys()];
  }

  has(name: string): boolean {
    return this.location.has(name);
  }

  /** Dtype, shape and offsets of a tensor, without reading its data; undefined when absent. */
  entry(name: string): SafetensorsEntry | undefined {
    return this.location.get(name)?.header.tensors.get(name);
  }

  async read(name: string): Promise<CheckpointTensor> {
    return this.readerOf(name).readTensor(name);
  }

  /** A tensor's bytes as stored (`SafetensorsReader.readStored`). */
  async readStored(name: string): Promise<Uint8Array> {
    return (await this.readerOf(name).readStored(name)).bytes;
  }

  private readerOf(name: string): SafetensorsReader {
    const reader = this.location.get(name);
    if (reader === undefined) throw new CheckpointError(this.dir, `the checkpoint has no tensor "${name}"`);
    return reader;
  }

  async close(): Promise<void> {
    for (const reader of this.readers.values()) await reader.close();
    this.readers.clear();
  }
}
