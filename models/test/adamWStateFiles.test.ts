import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DrmasError } from '@drmas/core';
import {
  hasAdamWState,
  OPTIMIZER_META_FILE,
  OPTIMIZER_STATE_FILE,
  readAdamWState,
  serializeAdamWState,
} from '../src/checkpoint/adamWStateFiles.js';

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

async function write(files: Record<string, string | Uint8Array>): Promise<void> {
  for (const [name, contents] of Object.entries(files)) await writeFile(join(dir, name), contents);
}

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
