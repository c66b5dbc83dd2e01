/**
 * The safetensors format (https://github.com/huggingface/safetensors): an 8-byte little-endian header length N,
 * N bytes of JSON header `{name: {dtype, shape, data_offsets: [begin, end]}, __metadata__?: {string: string}}`,
 * then the tensor bytes, little-endian, offsets relative to the end of the header.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { endianness } from 'node:os';
import { SafetensorsError } from './errors.js';
import { decodeBf16, decodeF16, encodeBf16, encodeF16 } from './halfFloat.js';

export type SafetensorsDtype = 'F64' | 'F32' | 'F16' | 'BF16' | 'I64' | 'I32' | 'I16' | 'I8' | 'U8' | 'BOOL';
/** Dtypes this module writes. Floats are rounded to nearest-even; integer dtypes round to the nearest integer. */
export type WritableDtype = 'F32' | 'F16' | 'BF16' | 'I32' | 'I64' | 'U8';

const DTYPE_BYTES: Readonly<Record<SafetensorsDtype, number>> = {
  F64: 8,
  F32: 4,
  F16: 2,
  BF16: 2,
  I64: 8,
  I32: 4,
  I16: 2,
  I8: 1,
  U8: 1,
  BOOL: 1,
};

/** The Rust crate refuses headers above 100 MB; so do we. */
const MAX_HEADER_BYTES = 100_000_000;
/** Node reads at most 2 GiB per call. */
const MAX_READ_CHUNK = 1 << 30;

export function isSafetensorsDtype(dtype: string): dtype is SafetensorsDtype {
  return Object.prototype.hasOwnProperty.call(DTYPE_BYTES, dtype);
}

export function dtypeByteSize(dtype: SafetensorsDtype): number {
  return DTYPE_BYTES[dtype];
}

export interface SafetensorsEntry {
  dtype: SafetensorsDtype;
  shape: number[];
  /** [begin, end) relative to the first byte after the header. */
  dataOffsets: [number, number];
}

export interface SafetensorsHeader {
  file: string;
  metadata: Record<string, string>;
  tensors: Map<string, SafetensorsEntry>;
  /** Absolute file offset of the data section (8 + header length). */
  dataStart: number;
  dataLength: number;
}

/** A loaded tensor. `dtype` is the dtype stored on disk; `data` is always float32, row-major. */
export interface CheckpointTensor {
  dtype: SafetensorsDtype;
  shape: number[];
  data: Float32Array;
}

/** A tensor to write. `dtype` overrides the writer's default dtype for this tensor. */
export interface TensorInput {
  shape: readonly number[];
  data: Float32Array | ArrayLike<number>;
  dtype?: WritableDtype;
}

export type TensorMapInput = ReadonlyMap<string, TensorInput> | Readonly<Record<string, TensorInput>>;

export interface SafetensorsContents {
  metadata: Record<string, string>;
  tensors: Map<string, CheckpointTensor>;
}

export interface ReadSafetensorsOptions {
  /** Load only the tensors for which this returns true. */
  filter?: (name: string) => boolean;
}

export interface WriteSafetensorsOptions {
  /** Dtype of tensors that do not name their own; default F32. */
  dtype?: WritableDtype;
  /** Extra `__metadata__` entries; `format: 'pt'` is always written unless given here. */
  metadata?: Record<string, string>;
  /** fsync the file before closing it. */
  sync?: boolean;
}

export function elementCount(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

function assertLittleEndianHost(file: string): void {
  if (endianness() !== 'LE') {
    throw new SafetensorsError(file, 'big-endian hosts are not supported', undefined, 'run on a little-endian machine (x86-64, arm64)');
  }
}

/** Validates a parsed header against the size of the data section. */
export function parseSafetensorsHeader(file: string, headerText: string, dataStart: number, dataLength: number): SafetensorsHeader {
  let json: unknown;
  try {
    json = JSON.parse(headerText);
  } catch (err) {
    throw new SafetensorsError(file, `the header is not valid JSON (${(err as Error).message}); the file is not safetensors or is corrupt`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw new SafetensorsError(file, 'the header is not a JSON object');
  }
  const metadata: Record<string, string> = {};
  const tensors = new Map<string, SafetensorsEntry>();
  for (const [name, raw] of Object.entries(json as Record<string, unknown>)) {
    if (name === '__metadata__') {
      if (raw !== null && typeof raw === 'object') {
        for (const [k, v] of Object.entries(raw as Record<string, unknown>)) if (typeof v === 'string') metadata[k] = v;
      }
      continue;
    }
    if (raw === null || typeof raw !== 'object') throw new SafetensorsError(file, 'header entry is not an object', name);
    const { dtype, shape, data_offsets: offsets } = raw as Record<string, unknown>;
    if (typeof dtype !== 'string' || !isSafetensorsDtype(dtype)) {
      throw new SafetensorsError(
        file,
        `unknown or unsupported dtype ${JSON.stringify(dtype)} (supported: ${Object.keys(DTYPE_BYTES).join(', ')})`,
        name,
      );
    }
    if (!isIndexList(shape)) {
      throw new SafetensorsError(file, `shape ${JSON.stringify(shape)} is not a list of non-negative integers`, name);
    }
    if (!isIndexList(offsets) || offsets.length !== 2 || offsets[0]! > offsets[1]!) {
      throw new SafetensorsError(file, `data_offsets ${JSON.stringify(offsets)} is not [begin, end] with begin <= end`, name);
    }
    const [begin, end] = offsets as [number, number];
    if (end > dataLength) {
      throw new SafetensorsError(
        file,
        `data_offsets [${begin}, ${end}] are out of range: the data section holds only ${dataLength} bytes ` +
          '(the file is truncated or the header is wrong)',
        name,
      );
    }
    const expectedBytes = elementCount(shape) * DTYPE_BYTES[dtype];
    if (end - begin !== expectedBytes) {
      throw new SafetensorsError(
        file,
        `data_offsets [${begin}, ${end}] span ${end - begin} bytes but ${dtype} shape [${shape.join(', ')}] needs ${expectedBytes}`,
        name,
      );
    }
    tensors.set(name, { dtype, shape: shape.slice(), dataOffsets: [begin, end] });
  }
  return { file, metadata, tensors, dataStart, dataLength };
}

function headerLengthFrom(file: string, prefix: Uint8Array, fileSize: number): number {
  if (fileSize < 8) {
    throw new SafetensorsError(file, `the file is truncated: ${fileSize} bytes, shorter than the 8-byte header length`);
  }
  const n = Number(new DataView(prefix.buffer, prefix.byteOffset, 8).getBigUint64(0, true));
  if (n > MAX_HEADER_BYTES) {
    throw new SafetensorsError(file, `header length ${n} exceeds ${MAX_HEADER_BYTES} bytes: not a safetensors file`);
  }
  if (8 + n > fileSize) {
    throw new SafetensorsError(
      file,
      `the file is truncated: the header claims ${n} bytes but only ${fileSize - 8} follow the length prefix`,
    );
  }
  return n;
}

/** Converts the raw little-endian bytes of one tensor (a fresh, aligned buffer) to float32. */
function decodeTensor(file: string, name: string, dtype: SafetensorsDtype, buffer: ArrayBuffer, count: number): Float32Array {
  switch (dtype) {
    case 'F32':
      return new Float32Array(buffer, 0, count);
    case 'F16':
      return decodeF16(new Uint16Array(buffer, 0, count));
    case 'BF16':
      return decodeBf16(new Uint16Array(buffer, 0, count));
    case 'F64':
      return Float32Array.from(new Float64Array(buffer, 0, count));
    case 'I64': {
      const src = new BigInt64Array(buffer, 0, count);
      const out = new Float32Array(count);
      for (let i = 0; i < count; i++) out[i] = Number(src[i]);
      return out;
    }
    case 'I32':
      return Float32Array.from(new Int32Array(buffer, 0, count));
    case 'I16':
      return Float32Array.from(new Int16Array(buffer, 0, count));
    case 'I8':
      return Float32Array.from(new Int8Array(buffer, 0, count));
    case 'U8':
    case 'BOOL':
      return Float32Array.from(new Uint8Array(buffer, 0, count));
    default:
      throw new SafetensorsError(file, `unsupported dtype ${String(dtype)}`, name);
  }
}

async function readFully(fh: FileHandle, file: string, target: Uint8Array, position: number, tensor?: string): Promise<void> {
  let done = 0;
  while (done < target.length) {
    const length = Math.min(target.length - done, MAX_READ_CHUNK);
    const { bytesRead } = await fh.read(target, done, length, position + done);
    if (bytesRead === 0) {
      throw new SafetensorsError(file, `the file is truncated: unexpected end of file at byte ${position + done}`, tensor);
    }
    done += bytesRead;
  }
}

/**
 * An open safetensors file: the header is parsed on open, tensors are read one slice at a time.
 * Close it when done (`await using` is not available on Node 20, so call `close()`).
 */
export class SafetensorsReader {
  private constructor(
    private readonly fh: FileHandle,
    readonly header: SafetensorsHeader,
  ) {}

  static async open(file: string): Promise<SafetensorsReader> {
    assertLittleEndianHost(file);
    let fh: FileHandle;
    try {
      fh = await open(file, 'r');
    } catch (err) {
      throw new SafetensorsError(
        file,
        `cannot open the file: ${(err as Error).message}`,
        undefined,
        'check that the file exists and is readable',
      );
    }
    try {
      const { size } = await fh.stat();
      const prefix = new Uint8Array(8);
      if (size >= 8) await readFully(fh, file, prefix, 0);
      const n = headerLengthFrom(file, prefix, size);
      const headerBytes = new Uint8Array(n);
      await readFully(fh, file, headerBytes, 8);
      const header = parseSafetensorsHeader(file, new TextDecoder().decode(headerBytes), 8 + n, size - 8 - n);
      return new SafetensorsReader(fh, header);
    } catch (err) {
      await fh.close();
      throw err;
    }
  }

  get names(): string[] {
    return [...this.header.tensors.keys()];
  }

  async readTensor(name: string): Promise<CheckpointTensor> {
    const { entry, bytes } = await this.readStored(name);
    const data = decodeTensor(this.header.file, name, entry.dtype, bytes.buffer, elementCount(entry.shape));
    return { dtype: entry.dtype, shape: entry.shape.slice(), data };
  }

  /** A tensor's bytes as stored, not decoded (U8 codes stay a byte a value), and its entry. */
  async readStored(name: string): Promise<{ entry: SafetensorsEntry; bytes: Uint8Array<ArrayBuffer> }> {
    const entry = this.header.tensors.get(name);
    if (entry === undefined) throw new SafetensorsError(this.header.file, 'no such tensor in the file', name);
    const [begin, end] = entry.dataOffsets;
    const bytes = new Uint8Array(end - begin);
    await readFully(this.fh, this.header.file, bytes, this.header.dataStart + begin, name);
    return { entry, bytes };
  }

  async close(): Promise<void> {
    await this.fh.close();
  }
}

export async function readSafetensorsHeader(file: string): Promise<SafetensorsHeader> {
  const reader = await SafetensorsReader.open(file);
  await reader.close();
  return reader.header;
}

/** Reads every tensor (or those passing `filter`) of a safetensors file, converting to float32. */
export async function readSafetensors(file: string, options: ReadSafetensorsOptions = {}): Promise<SafetensorsContents> {
  const reader = await SafetensorsReader.open(file);
  try {
    const tensors = new Map<string, CheckpointTensor>();
    for (const name of reader.names) {
      if (options.filter && !options.filter(name)) continue;
      tensors.set(name, await reader.readTensor(name));
    }
    return { metadata: reader.header.metadata, tensors };
  } finally {
    await reader.close();
  }
}

/** Parses a safetensors file already in memory. */
export function parseSafetensors(bytes: Uint8Array, file = '<memory>', options: ReadSafetensorsOptions = {}): SafetensorsContents {
  assertLittleEndianHost(file);
  const n = headerLengthFrom(file, bytes, bytes.length);
  const header = parseSafetensorsHeader(file, new TextDecoder().decode(bytes.subarray(8, 8 + n)), 8 + n, bytes.length - 8 - n);
  const tensors = new Map<string, CheckpointTensor>();
  for (const [name, entry] of header.tensors) {
    if (options.filter && !options.filter(name)) continue;
    const [begin, end] = entry.dataOffsets;
    const copy = bytes.slice(header.dataStart + begin, header.dataStart + end);
    tensors.set(name, {
      dtype: entry.dtype,
      shape: entry.shape.slice(),
      data: decodeTensor(file, name, entry.dtype, copy.buffer, elementCount(entry.shape)),
    });
  }
  return { metadata: header.metadata, tensors };
}

// ---------------------------------------------------------------------------------------------------------------
// Writing

interface PlannedTensor {
  name: string;
  dtype: WritableDtype;
  shape: number[];
  data: Float32Array | ArrayLike<number>;
  begin: number;
  end: number;
}

function isIndexList(value: unknown): value is number[] {
  return Array.isArray(value) && value.every((d) => Number.isSafeInteger(d) && (d as number) >= 0);
}

export function tensorEntries(tensors: TensorMapInput): [string, TensorInput][] {
  const entries =
    tensors instanceof Map
      ? Array.from(tensors as ReadonlyMap<string, TensorInput>)
      : Object.entries(tensors as Record<string, TensorInput>);
  return entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

const WRITABLE: ReadonlySet<string> = new Set<WritableDtype>(['F32', 'F16', 'BF16', 'I32', 'I64', 'U8']);
const WRITE_HINT =
  'fix the tensors given to the writer: a name other than __metadata__, dtype F32, F16, BF16, I32, I64 or U8, and as many values as the shape holds';

function planTensors(file: string, entries: [string, TensorInput][], defaultDtype: WritableDtype): PlannedTensor[] {
  let offset = 0;
  return entries.map(([name, t]) => {
    if (name === '__metadata__' || name === '') throw new SafetensorsError(file, 'reserved or empty tensor name', name, WRITE_HINT);
    const dtype = t.dtype ?? defaultDtype;
    if (!WRITABLE.has(dtype))
      throw new SafetensorsError(file, `cannot write dtype ${dtype} (use F32, F16, BF16, I32, I64 or U8)`, name, WRITE_HINT);
    if (!t.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      throw new SafetensorsError(file, `shape [${t.shape.join(', ')}] is not a list of non-negative integers`, name, WRITE_HINT);
    }
    const count = elementCount(t.shape);
    if (t.data.length !== count) {
      throw new SafetensorsError(
        file,
        `shape [${t.shape.join(', ')}] needs ${count} values but data holds ${t.data.length}`,
        name,
        WRITE_HINT,
      );
    }
    const begin = offset;
    offset += count * DTYPE_BYTES[dtype];
    return { name, dtype, shape: [...t.shape], data: t.data, begin, end: offset };
  });
}

/** The header bytes, padded with spaces to a multiple of 8 as the Rust crate does. */
function headerBytes(file: string, planned: PlannedTensor[], extraMetadata: Record<string, string> | undefined): Uint8Array {
  const metadata: Record<string, string> = { format: 'pt', ...extraMetadata };
  for (const [k, v] of Object.entries(metadata)) {
    if (typeof v !== 'string')
      throw new SafetensorsError(file, `__metadata__ value for "${k}" must be a string`, undefined, 'give metadata as string values');
  }
  const header: Record<string, unknown> = { __metadata__: metadata };
  for (const p of planned) header[p.name] = { dtype: p.dtype, shape: p.shape, data_offsets: [p.begin, p.end] };
  const json = new TextEncoder().encode(JSON.stringify(header));
  const padded = new Uint8Array(Math.ceil(json.length / 8) * 8).fill(0x20);
  padded.set(json);
  return padded;
}

function lengthPrefix(n: number): Uint8Array {
  const prefix = new Uint8Array(8);
  new DataView(prefix.buffer).setBigUint64(0, BigInt(n), true);
  return prefix;
}

const ENCODE_CHUNK = 1 << 20;

/** Yields the little-endian bytes of a tensor in pieces of at most a few MiB. */
function* tensorBytes(p: PlannedTensor): Generator<Uint8Array> {
  const n = p.data.length;
  if (p.dtype === 'F32' && p.data instanceof Float32Array) {
    yield new Uint8Array(p.data.buffer, p.data.byteOffset, p.data.byteLength);
    return;
  }
  if (p.dtype === 'U8' && p.data instanceof Uint8Array) {
    yield p.data;
    return;
  }
  for (let start = 0; start < n; start += ENCODE_CHUNK) {
    const stop = Math.min(n, start + ENCODE_CHUNK);
    const f32 =
      p.data instanceof Float32Array
        ? p.data.subarray(start, stop)
        : Float32Array.from({ length: stop - start }, (_, i) => p.data[start + i]!);
    switch (p.dtype) {
      case 'F32':
        yield new Uint8Array(f32.buffer, f32.byteOffset, f32.byteLength);
        break;
      case 'F16': {
        const bits = encodeF16(f32);
        yield new Uint8Array(bits.buffer);
        break;
      }
      case 'BF16': {
        const bits = encodeBf16(f32);
        yield new Uint8Array(bits.buffer);
        break;
      }
      case 'I32': {
        const ints = new Int32Array(stop - start);
        for (let i = 0; i < ints.length; i++) ints[i] = Math.round(p.data[start + i]!);
        yield new Uint8Array(ints.buffer);
        break;
      }
      case 'I64': {
        const ints = new BigInt64Array(stop - start);
        for (let i = 0; i < ints.length; i++) ints[i] = BigInt(Math.round(p.data[start + i]!));
        yield new Uint8Array(ints.buffer);
        break;
      }
      case 'U8': {
        const bytes = new Uint8Array(stop - start);
        for (let i = 0; i < bytes.length; i++) bytes[i] = Math.round(p.data[start + i]!);
        yield bytes;
        break;
      }
    }
  }
}

/** Number of bytes `writeSafetensors` would write for these tensor data (header excluded). */
export function tensorByteSize(t: TensorInput, defaultDtype: WritableDtype = 'F32'): number {
  return elementCount(t.shape) * DTYPE_BYTES[t.dtype ?? defaultDtype];
}

/**
 * The bytes of a safetensors file of these tensors (sorted by name) in pieces: the length prefix, the header, then each
 * tensor's data (a float32 tensor as a view of its own array, no copy). Checked when called; iterable any number of
 * times, so `fs.writeFile` streams it to a file without one buffer holding the whole file.
 */
export function safetensorsChunks(tensors: TensorMapInput, options: WriteSafetensorsOptions = {}): Iterable<Uint8Array> {
  assertLittleEndianHost('<memory>');
  const planned = planTensors('<memory>', tensorEntries(tensors), options.dtype ?? 'F32');
  const header = headerBytes('<memory>', planned, options.metadata);
  return {
    *[Symbol.iterator]() {
      yield lengthPrefix(header.length);
      yield header;
      for (const p of planned) yield* tensorBytes(p);
    },
  };
}

/** Serializes tensors (sorted by name) to safetensors bytes in memory. */
export function serializeSafetensors(tensors: TensorMapInput, options: WriteSafetensorsOptions = {}): Uint8Array {
  const chunks = [...safetensorsChunks(tensors, options)];
  const out = new Uint8Array(chunks.reduce((n, chunk) => n + chunk.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

async function writeFully(fh: FileHandle, bytes: Uint8Array): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await fh.write(bytes, done, Math.min(bytes.length - done, MAX_READ_CHUNK));
    done += bytesWritten;
  }
}

/**
 * Writes tensors (sorted by name) to `file` in safetensors format, loadable by Python `safetensors` and
 * transformers. Returns the number of tensor data bytes written.
 */
export async function writeSafetensors(file: string, tensors: TensorMapInput, options: WriteSafetensorsOptions = {}): Promise<number> {
  assertLittleEndianHost(file);
  const planned = planTensors(file, tensorEntries(tensors), options.dtype ?? 'F32');
  const header = headerBytes(file, planned, options.metadata);
  const fh = await open(file, 'w');
  try {
    await writeFully(fh, lengthPrefix(header.length));
    await writeFully(fh, header);
    for (const p of planned) for (const chunk of tensorBytes(p)) await writeFully(fh, chunk);
    if (options.sync) await fh.sync();
  } finally {
    await fh.close();
  }
  return planned.at(-1)?.end ?? 0;
}
