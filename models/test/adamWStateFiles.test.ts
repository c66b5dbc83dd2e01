import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { freemem, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DrmasError, verifyCheckpoint, writeCheckpointManifest } from '@drmas/core';
import { describeSlow } from '../../test/support/describeSlow.js';
import {
  hasAdamWState,
  OPTIMIZER_META_FILE,
  OPTIMIZER_STATE_FILE,
  OPTIMIZER_STATE_INDEX_FILE,
  readAdamWState,
  serializeAdamWState,
  type AdamWMoments,
} from '../src/checkpoint/adamWStateFiles.js';
import { saveCheckpoint, type CheckpointFileContents } from '../src/checkpoint/checkpointDirectory.js';

/**
 * The optimizer-state files both backends write and read: the bytes laid out as the format says (read back here by
 * hand: an 8-byte little-endian header length, the JSON header, float32 data), and a state read back equal, with the
 * errors a damaged or mismatched state gives.
 */

const SHAPES = new Map<string, number[]>([
  ['model.embed_tokens.weight', [3, 2]],
  ['model.norm.weight', [2]],
]);
const SETTINGS = { lr: 0.001, betas: [0.9, 0.999] as [number, number], eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1, paramGroups: [] };

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'drmas-adamw-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function write(files: Record<string, CheckpointFileContents>): Promise<void> {
  for (const [name, contents] of Object.entries(files)) await writeFile(join(dir, name), contents);
}

const OLD_STATE_SHA256 = 'd19ca504dcb95987e632e58daebc4411bc2b0e500273cd86a23af5b5b5c9411c';
const OLD_META_SHA256 = 'f6c07a4940bc8e035cd24775674c56a68ac98bcf748744b040071fbc73d2ce9a';

const embedding = { expAvg: Float32Array.of(1, 2, 3, 4, 5, 6), expAvgSq: Float32Array.of(0.5, 0.25, 0.125, 1, 2, 4) };

test('the files: <param>.exp_avg / .exp_avg_sq float32 tensors of the parameter shape, and { type, step, settings }', async () => {
  await write(serializeAdamWState(7, [['model.embed_tokens.weight', embedding]], (name) => SHAPES.get(name)!, SETTINGS));
  const bytes = await readFile(join(dir, OPTIMIZER_STATE_FILE));
  const headerLength = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString('utf8')) as Record<
    string,
    { dtype: string; shape: number[]; data_offsets: [number, number] }
  >;
  const data = bytes.subarray(8 + headerLength);
  const tensor = (name: string) => {
    const [begin, end] = header[name]!.data_offsets;
    return Array.from(new Float32Array(data.buffer.slice(data.byteOffset + begin, data.byteOffset + end)));
  };
  expect(header['model.embed_tokens.weight.exp_avg']).toMatchObject({ dtype: 'F32', shape: [3, 2] });
  expect(header['model.embed_tokens.weight.exp_avg_sq']).toMatchObject({ dtype: 'F32', shape: [3, 2] });
  expect(tensor('model.embed_tokens.weight.exp_avg')).toEqual([1, 2, 3, 4, 5, 6]);
  expect(tensor('model.embed_tokens.weight.exp_avg_sq')).toEqual([0.5, 0.25, 0.125, 1, 2, 4]);
  expect(JSON.parse(await readFile(join(dir, OPTIMIZER_META_FILE), 'utf8'))).toEqual({ type: 'adamw', step: 7, settings: SETTINGS });
});

test('reads back the step, the settings and the moments of the parameters that have them', async () => {
  expect(await hasAdamWState(dir)).toBe(false);
  await write(serializeAdamWState(7, [['model.embed_tokens.weight', embedding]], (name) => SHAPES.get(name)!, SETTINGS));
  expect(await hasAdamWState(dir)).toBe(true);
  const state = await readAdamWState(dir, SHAPES);
  expect(state.step).toBe(7);
  expect(state.settings).toEqual(SETTINGS);
  expect([...state.moments.keys()]).toEqual(['model.embed_tokens.weight']);
  expect(Array.from(state.moments.get('model.embed_tokens.weight')!.expAvg)).toEqual([1, 2, 3, 4, 5, 6]);
  expect(Array.from(state.moments.get('model.embed_tokens.weight')!.expAvgSq)).toEqual([0.5, 0.25, 0.125, 1, 2, 4]);
});

test.each([
  {
    label: 'moments of another shape',
    files: () => serializeAdamWState(1, [['model.norm.weight', embedding]], () => [6], undefined),
    file: OPTIMIZER_STATE_FILE,
    message: "moments of 'model.norm.weight' are missing or do not match shape [2]",
  },
  {
    label: 'a meta file without a step',
    files: () => ({ ...serializeAdamWState(1, [], () => [], undefined), [OPTIMIZER_META_FILE]: '{"type":"adamw"}' }),
    file: OPTIMIZER_META_FILE,
    message: "missing numeric 'step'",
  },
  {
    label: 'no meta file',
    files: () => ({ [OPTIMIZER_STATE_FILE]: serializeAdamWState(1, [], () => [], undefined)[OPTIMIZER_STATE_FILE]! }),
    file: OPTIMIZER_META_FILE,
    message: 'cannot read optimizer state',
  },
])('$label: CHECKPOINT_INVALID naming the file', async ({ files, file, message }) => {
  await write(files());
  const error = await readAdamWState(dir, SHAPES).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(DrmasError);
  expect(error).toMatchObject({ code: 'CHECKPOINT_INVALID', file: join(dir, file) });
  expect((error as Error).message).toContain(message);
});

describe('a state past one shard', () => {
  // Sorted tensors and their float32 sizes: a.exp_avg 24, a.exp_avg_sq 24, b.exp_avg 8, b.exp_avg_sq 8, c.exp_avg 16,
  // c.exp_avg_sq 16. Packed greedily into shards of at most 32 bytes: [24] [24+8] [8+16] [16].
  const shapes = new Map<string, number[]>([
    ['a', [2, 3]],
    ['b', [2]],
    ['c', [4]],
  ]);
  const moments = new Map<string, AdamWMoments>([
    ['a', { expAvg: Float32Array.of(0.5, -1.25, 3, 0.125, 7, -2), expAvgSq: Float32Array.of(1, 2, 3, 4, 5, 6) }],
    ['b', { expAvg: Float32Array.of(0.25, -0.75), expAvgSq: Float32Array.of(9, 0.0625) }],
    ['c', { expAvg: Float32Array.of(-1, 1e-7, 3.5, 2 ** -20), expAvgSq: Float32Array.of(1e-12, 4, 0, 8) }],
  ]);
  const shard = (i: number) => `optimizer-0000${i}-of-00004.safetensors`;
  const sharded = () => serializeAdamWState(11, moments, (name) => shapes.get(name)!, SETTINGS, 32);

  test('shards named as transformers names them, an index with every tensor, each shard at most the shard size', async () => {
    const files = sharded();
    expect(Object.keys(files).sort()).toEqual([OPTIMIZER_META_FILE, ...[1, 2, 3, 4].map(shard), OPTIMIZER_STATE_INDEX_FILE].sort());
    expect(JSON.parse(files[OPTIMIZER_STATE_INDEX_FILE] as string)).toEqual({
      metadata: { total_size: 96 },
      weight_map: {
        'a.exp_avg': shard(1),
        'a.exp_avg_sq': shard(2),
        'b.exp_avg': shard(2),
        'b.exp_avg_sq': shard(3),
        'c.exp_avg': shard(3),
        'c.exp_avg_sq': shard(4),
      },
    });
    await write(files);
    const bytes = await readFile(join(dir, shard(3)));
    const headerLength = Number(bytes.readBigUInt64LE(0));
    const data = bytes.subarray(8 + headerLength);
    expect(data.length).toBe(24);
    expect(Array.from(new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + 24)))).toEqual([
      9,
      0.0625,
      -1,
      Math.fround(1e-7),
      3.5,
      2 ** -20,
    ]);
  });

  test('reads back every moment exactly', async () => {
    await write(sharded());
    const state = await readAdamWState(dir, shapes);
    expect(state.step).toBe(11);
    expect(state.settings).toEqual(SETTINGS);
    for (const [name, m] of moments) {
      expect(state.moments.get(name)!.expAvg).toEqual(m.expAvg);
      expect(state.moments.get(name)!.expAvgSq).toEqual(m.expAvgSq);
    }
  });

  test('a checkpoint manifest lists every shard and verification finds one missing; reading names the shard', async () => {
    await saveCheckpoint(join(dir, 'policy'), { config: {}, tensors: {}, extraFiles: sharded() });
    await writeFile(
      join(dir, 'trainer_state.json'),
      JSON.stringify({ format: 2, step: 11, seed: 0, workerGroups: ['policy'], states: {} }),
    );
    const manifest = await writeCheckpointManifest(dir);
    expect(manifest.files.map((f) => f.path)).toEqual(expect.arrayContaining([1, 2, 3, 4].map((i) => `policy/${shard(i)}`)));
    await expect(verifyCheckpoint(dir)).resolves.toMatchObject({ legacy: false });

    await rm(join(dir, 'policy', shard(3)));
    const verified = await verifyCheckpoint(dir).catch((e: unknown) => e);
    expect(verified).toMatchObject({ code: 'CHECKPOINT_INVALID' });
    expect((verified as Error).message).toContain(`policy/${shard(3)} is missing`);

    const read = await readAdamWState(join(dir, 'policy'), shapes).catch((e: unknown) => e);
    expect(read).toMatchObject({ name: 'OptimizerStateError', code: 'CHECKPOINT_INVALID', file: join(dir, 'policy', shard(3)) });
    expect((read as Error).message).toContain(`optimizer state file ${shard(3)} is missing or damaged`);
  });

  test('a truncated shard: OptimizerStateError naming it', async () => {
    await write(sharded());
    await truncate(join(dir, shard(2)), 40);
    const error = await readAdamWState(dir, shapes).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'OptimizerStateError', file: join(dir, shard(2)) });
  });

  test('one file: missing, or cut short inside its data, is an OptimizerStateError naming optimizer.safetensors', async () => {
    const single = serializeAdamWState(11, moments, (name) => shapes.get(name)!, SETTINGS);
    await write(single);
    const file = join(dir, 'optimizer.safetensors');
    const size = (await stat(file)).size;
    // The header stays whole: the file opens, and the last tensor's read finds its data short.
    await truncate(file, size - 4);
    const cut = await readAdamWState(dir, shapes).catch((e: unknown) => e);
    expect(cut).toMatchObject({ name: 'OptimizerStateError', file });
    expect((cut as Error).message).toContain('optimizer state file optimizer.safetensors is missing or damaged');
    await rm(file);
    const missing = await readAdamWState(dir, shapes).catch((e: unknown) => e);
    expect(missing).toMatchObject({ name: 'OptimizerStateError', file });
    expect((missing as Error).message).toContain('is missing or damaged: the file does not exist');
  });

  test('a state within the shard size stays one optimizer.safetensors, bytes as written before sharding existed', () => {
    // sha256 of the files serializeAdamWState wrote for this state at 3a8e16c, before shards.
    const files = serializeAdamWState(
      3,
      [
        ['a.weight', moments.get('a')!],
        ['b.bias', moments.get('b')!],
      ],
      (name) => (name === 'a.weight' ? [2, 3] : [2]),
      undefined,
    );
    expect(Object.keys(files).sort()).toEqual([OPTIMIZER_META_FILE, OPTIMIZER_STATE_FILE]);
    const sha = (contents: CheckpointFileContents) =>
      createHash('sha256')
        .update(contents as string | Uint8Array)
        .digest('hex');
    expect(sha(files[OPTIMIZER_STATE_FILE]!)).toBe(OLD_STATE_SHA256);
    expect(sha(files[OPTIMIZER_META_FILE]!)).toBe(OLD_META_SHA256);
  });
});

describeSlow('a state past 4 GiB (slow: 4.8 GB on disk, about 10 GB of memory)', () => {
  const freeGiB = () =>
    Number(/^Mem:\s+\d+\s+\d+\s+(\d+)/m.exec(execFileSync('free', ['-g'], { encoding: 'utf8' }))?.[1] ?? freemem() / 2 ** 30);

  test('one parameter of 600M floats: both moments written as shards and read back', async () => {
    if (freeGiB() < 12) {
      console.warn(`skipped: ${freeGiB()} GiB free, 12 needed`);
      return;
    }
    const n = 600_000_000;
    const expAvg = new Float32Array(n);
    const expAvgSq = new Float32Array(n);
    for (let i = 0; i < n; i += 999_983) {
      expAvg[i] = i;
      expAvgSq[i] = -i / 3;
    }
    await saveCheckpoint(dir, {
      config: {},
      tensors: {},
      extraFiles: serializeAdamWState(5, [['w', { expAvg, expAvgSq }]], () => [n], undefined),
    });
    const shards = ['optimizer-00001-of-00002.safetensors', 'optimizer-00002-of-00002.safetensors'];
    expect((await readdir(dir)).sort()).toEqual(['config.json', ...shards, OPTIMIZER_META_FILE, OPTIMIZER_STATE_INDEX_FILE]);
    const sizes = await Promise.all(shards.map(async (file) => (await stat(join(dir, file))).size));
    expect(sizes[0]! + sizes[1]!).toBeGreaterThan(2 ** 32);
    const state = await readAdamWState(dir, [['w', [n]]]);
    const back = state.moments.get('w')!;
    for (let i = 0; i < n; i += 999_983) {
      expect(back.expAvg[i]).toBe(Math.fround(i));
      expect(back.expAvgSq[i]).toBe(Math.fround(-i / 3));
    }
    expect(Buffer.compare(Buffer.from(back.expAvg.buffer), Buffer.from(expAvg.buffer))).toBe(0);
  }, 600_000);
});
