import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SafetensorsError } from '../src/checkpoint/errors.js';
import {
  parseSafetensors,
  readSafetensors,
  readSafetensorsHeader,
  serializeSafetensors,
  writeSafetensors,
  type TensorInput,
} from '../src/checkpoint/safetensors.js';
import { readShardedSafetensors, writeShardedSafetensors, type SafetensorsIndex } from '../src/checkpoint/shardedSafetensors.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'drmas-safetensors-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A safetensors file assembled byte by byte, independent of the writer. */
function handMade(header: object | string, data: Uint8Array, declaredLength?: number): Uint8Array {
  const json = new TextEncoder().encode(typeof header === 'string' ? header : JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(declaredLength ?? json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected it to throw');
}

function le16(...bits: number[]): Uint8Array {
  return new Uint8Array(Uint16Array.from(bits).buffer);
}

describe('reading', () => {
  test('decodes F32, F16, BF16, I32 and I64 from hand-made bytes', () => {
    const f32 = new Uint8Array(Float32Array.of(1.5, -0.25).buffer);
    const f16 = le16(0x3c00, 0xc000, 0x0001, 0x7c00);
    const bf16 = le16(0x3f80, 0xc000, 0xff80);
    const i32 = new Uint8Array(Int32Array.of(-7, 42).buffer);
    const i64 = new Uint8Array(BigInt64Array.of(-3n, 5n).buffer);
    const parts = [f32, f16, bf16, i32, i64];
    const offsets: [number, number][] = [];
    let at = 0;
    for (const p of parts) offsets.push([at, (at += p.length)]);
    const data = new Uint8Array(at);
    parts.forEach((p, i) => data.set(p, offsets[i]![0]));
    const bytes = handMade(
      {
        __metadata__: { format: 'pt' },
        a: { dtype: 'F32', shape: [2], data_offsets: offsets[0] },
        b: { dtype: 'F16', shape: [2, 2], data_offsets: offsets[1] },
        c: { dtype: 'BF16', shape: [3], data_offsets: offsets[2] },
        d: { dtype: 'I32', shape: [2], data_offsets: offsets[3] },
        e: { dtype: 'I64', shape: [2, 1], data_offsets: offsets[4] },
      },
      data,
    );
    const { tensors, metadata } = parseSafetensors(bytes, 'hand.safetensors');
    expect(metadata).toEqual({ format: 'pt' });
    expect([...tensors.get('a')!.data]).toEqual([1.5, -0.25]);
    expect(tensors.get('b')!.shape).toEqual([2, 2]);
    expect([...tensors.get('b')!.data]).toEqual([1, -2, 2 ** -24, Infinity]);
    expect(tensors.get('c')!.dtype).toBe('BF16');
    expect([...tensors.get('c')!.data]).toEqual([1, -2, -Infinity]);
    expect([...tensors.get('d')!.data]).toEqual([-7, 42]);
    expect([...tensors.get('e')!.data]).toEqual([-3, 5]);
  });

  test('a scalar and an empty tensor', () => {
    const bytes = serializeSafetensors({
      scalar: { shape: [], data: [7] },
      empty: { shape: [0, 4], data: [] },
    });
    const { tensors } = parseSafetensors(bytes);
    expect(tensors.get('scalar')).toEqual({ dtype: 'F32', shape: [], data: Float32Array.of(7) });
    expect(tensors.get('empty')!.data.length).toBe(0);
  });
});

describe('writing', () => {
  const tensors: Record<string, TensorInput> = {
    'model.layers.0.w': { shape: [2, 3], data: Float32Array.of(1, 2, 3, 4, 5, 6) },
    'model.embed': { shape: [3], data: [0.5, -1, 1 / 3] },
    'lm_head.bf16': { shape: [2], data: Float32Array.of(1, 3.14159), dtype: 'BF16' },
  };

  test('header is padded with spaces to 8 bytes, sorted, with format pt and contiguous offsets', async () => {
    const file = join(dir, 'w.safetensors');
    await writeSafetensors(file, tensors);
    const bytes = new Uint8Array(await readFile(file));
    const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    expect(n % 8).toBe(0);
    const text = new TextDecoder().decode(bytes.subarray(8, 8 + n));
    expect(text).toMatch(/^\{"__metadata__":\{"format":"pt"\},"lm_head\.bf16":/);
    expect(text.trimEnd().length).toBeGreaterThan(n - 8);
    expect(/ *$/.exec(text)![0].length).toBe(n - text.trimEnd().length);
    const header = await readSafetensorsHeader(file);
    expect([...header.tensors.keys()]).toEqual(['lm_head.bf16', 'model.embed', 'model.layers.0.w']);
    expect([...header.tensors.values()].map((e) => e.dataOffsets)).toEqual([
      [0, 4],
      [4, 16],
      [16, 40],
    ]);
    expect(header.dataLength).toBe(40);
  });

  test.each(['F32', 'F16', 'BF16'] as const)('round trip with default dtype %s', async (dtype) => {
    const file = join(dir, `rt-${dtype}.safetensors`);
    await writeSafetensors(file, tensors, { dtype, metadata: { note: 'x' } });
    const { tensors: back, metadata } = await readSafetensors(file);
    expect(metadata).toEqual({ format: 'pt', note: 'x' });
    expect(back.get('lm_head.bf16')!.dtype).toBe('BF16');
    expect(back.get('model.embed')!.dtype).toBe(dtype);
    // Relative rounding error: half an ulp of 24, 11 and 8 significant bits.
    const tolerance = { F32: 2 ** -24, F16: 2 ** -11, BF16: 2 ** -8 } as Record<string, number>;
    for (const [name, t] of Object.entries(tensors)) {
      const got = back.get(name)!;
      expect(got.shape).toEqual(t.shape);
      Array.from(t.data).forEach((v, i) => expect(Math.abs(got.data[i]! - v)).toBeLessThanOrEqual(Math.abs(v) * tolerance[got.dtype]!));
    }
  });

  test('filter reads only the chosen tensors', async () => {
    const file = join(dir, 'filter.safetensors');
    await writeSafetensors(file, tensors);
    const { tensors: back } = await readSafetensors(file, { filter: (n) => n.startsWith('model.') });
    expect([...back.keys()]).toEqual(['model.embed', 'model.layers.0.w']);
  });

  test('rejects data that does not match the shape, naming the tensor', () => {
    expect(() => serializeSafetensors({ w: { shape: [2, 2], data: [1, 2, 3] } })).toThrow(
      /tensor "w".*shape \[2, 2\] needs 4 values but data holds 3/,
    );
  });
});

describe('sharded', () => {
  const make = (n: number, seed: number) => Float32Array.from({ length: n }, (_, i) => Math.sin(seed * 100 + i));
  const tensors = new Map<string, TensorInput>([
    ['a', { shape: [10], data: make(10, 1) }], // 40 bytes
    ['b', { shape: [5, 2], data: make(10, 2) }], // 40 bytes
    ['c', { shape: [30], data: make(30, 3) }], // 120 bytes: larger than a shard, alone in its own
    ['d', { shape: [4], data: make(4, 4) }], // 16 bytes
  ]);

  test('packs tensors into shards with an index, and reads them back', async () => {
    const out = join(dir, 'sharded');
    await import('node:fs/promises').then((fs) => fs.mkdir(out));
    const result = await writeShardedSafetensors(out, tensors, { maxShardSize: 100 });
    // a+b = 80 fit; c alone; d after c would exceed 100, so it opens a third shard.
    expect(result.files).toEqual([
      'model-00001-of-00003.safetensors',
      'model-00002-of-00003.safetensors',
      'model-00003-of-00003.safetensors',
      'model.safetensors.index.json',
    ]);
    expect(result.totalSize).toBe(216);
    const index = JSON.parse(await readFile(join(out, 'model.safetensors.index.json'), 'utf8')) as SafetensorsIndex;
    expect(index).toEqual({
      metadata: { total_size: 216 },
      weight_map: {
        a: 'model-00001-of-00003.safetensors',
        b: 'model-00001-of-00003.safetensors',
        c: 'model-00002-of-00003.safetensors',
        d: 'model-00003-of-00003.safetensors',
      },
    });
    const back = await readShardedSafetensors(join(out, 'model.safetensors.index.json'));
    expect([...back.keys()].sort()).toEqual(['a', 'b', 'c', 'd']);
    for (const [name, t] of tensors) {
      expect(back.get(name)!.shape).toEqual(t.shape);
      expect(back.get(name)!.data).toEqual(t.data);
    }
  });

  test('a checkpoint that fits one shard is a plain model.safetensors', async () => {
    const out = join(dir, 'one-shard');
    await import('node:fs/promises').then((fs) => fs.mkdir(out));
    const result = await writeShardedSafetensors(out, tensors, { maxShardSize: 10_000 });
    expect(result.files).toEqual(['model.safetensors']);
  });

  test('an index naming a tensor its shard lacks is an error naming both', async () => {
    const out = join(dir, 'bad-index');
    await import('node:fs/promises').then((fs) => fs.mkdir(out));
    await writeShardedSafetensors(out, tensors, { maxShardSize: 100 });
    const indexFile = join(out, 'model.safetensors.index.json');
    const index = JSON.parse(await readFile(indexFile, 'utf8')) as SafetensorsIndex;
    index.weight_map.a = 'model-00002-of-00003.safetensors';
    await writeFile(indexFile, JSON.stringify(index));
    await expect(readShardedSafetensors(indexFile)).rejects.toMatchObject({
      file: join(out, 'model-00002-of-00003.safetensors'),
      message: expect.stringMatching(/^tensor "a": .*does not hold it/),
    });
  });
});

describe('errors name the file and tensor', () => {
  test('truncated data section', async () => {
    const file = join(dir, 'truncated.safetensors');
    await writeSafetensors(file, { big: { shape: [100], data: new Float32Array(100) } });
    const { size } = await import('node:fs/promises').then((fs) => fs.stat(file));
    await truncate(file, size - 10);
    const err = await readSafetensors(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SafetensorsError);
    expect(err).toMatchObject({
      code: 'CHECKPOINT_INVALID',
      file,
      message: expect.stringMatching(/tensor "big".*out of range.*truncated/),
    });
  });

  test('truncated header', async () => {
    const file = join(dir, 'short-header.safetensors');
    await writeFile(file, handMade('{"a":', new Uint8Array(0), 500));
    await expect(readSafetensors(file)).rejects.toMatchObject({
      file,
      message: expect.stringMatching(/^the file is truncated: the header claims 500 bytes/),
    });
    await writeFile(file, new Uint8Array(5));
    await expect(readSafetensors(file)).rejects.toThrow(/truncated: 5 bytes/);
  });

  test('header that is not JSON', () => {
    expect(thrown(() => parseSafetensors(handMade('not json at all!', new Uint8Array(0)), 'x.safetensors'))).toMatchObject({
      file: 'x.safetensors',
      message: expect.stringMatching(/^the header is not valid JSON/),
    });
  });

  test('unknown dtype', () => {
    const bytes = handMade({ w: { dtype: 'F8_E4M3', shape: [1], data_offsets: [0, 1] } }, new Uint8Array(1));
    expect(thrown(() => parseSafetensors(bytes, 'x.safetensors'))).toMatchObject({
      file: 'x.safetensors',
      tensor: 'w',
      message: expect.stringMatching(/^tensor "w": unknown or unsupported dtype "F8_E4M3"/),
    });
  });

  test('offsets that disagree with the shape', () => {
    const bytes = handMade({ w: { dtype: 'F32', shape: [3], data_offsets: [0, 8] } }, new Uint8Array(8));
    expect(() => parseSafetensors(bytes, 'x.safetensors')).toThrow(/tensor "w".*span 8 bytes but F32 shape \[3\] needs 12/);
  });
});
