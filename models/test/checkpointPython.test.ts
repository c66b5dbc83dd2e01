/**
 * Cross-checks with Python: files written here are parsed by an independent reader (test/reference/
 * read_safetensors.py: struct + json + numpy, torch for bfloat16), and a file written byte by byte in Python is
 * read here. Skipped, with a warning, when /usr/bin/python3 with numpy is not available.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { saveCheckpoint } from '../src/checkpoint/checkpointDirectory.js';
import { encodeBf16, encodeF16 } from '../src/checkpoint/halfFloat.js';
import { readSafetensors } from '../src/checkpoint/safetensors.js';

const PYTHON = '/usr/bin/python3';
const referenceDir = join(dirname(fileURLToPath(import.meta.url)), 'reference');
const pythonProbe = spawnSync(PYTHON, ['-c', 'import numpy'], { encoding: 'utf8' });
const havePython = pythonProbe.status === 0;
if (!havePython) {
  console.warn(
    `checkpointPython tests skipped: ${PYTHON} with numpy is not available (${pythonProbe.error?.message ?? pythonProbe.stderr})`,
  );
}
const pythonTest = havePython ? test : test.skip;

function runPython(script: string, args: string[]): string {
  const result = spawnSync(PYTHON, [join(referenceDir, script), ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (result.status !== 0) throw new Error(`${script} failed (${result.status}): ${result.stderr}`);
  return result.stdout;
}

type JsonNumber = number | 'nan' | 'inf' | '-inf';
const fromJson = (v: JsonNumber): number => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'drmas-python-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

// Values chosen to exercise rounding: ties, subnormals, overflow, signed zero, non-finite.
const tricky = Float32Array.of(
  0,
  -0,
  1,
  -2,
  1 / 3,
  3.14159,
  65504,
  65519,
  65520,
  1e-8,
  2 ** -24,
  2 ** -25,
  3 * 2 ** -25,
  1 + 2 ** -8,
  1 + 3 * 2 ** -8,
  1 + 2 ** -11,
  1e30,
  -1e-40,
  Infinity,
  -Infinity,
  NaN,
);

pythonTest('a checkpoint written here is read identically by the independent Python reader', async () => {
  const ckpt = join(dir, 'ckpt');
  const matrix = Float32Array.from({ length: 12 }, (_, i) => Math.sin(i) * 10);
  await saveCheckpoint(ckpt, {
    config: { model_type: 'test' },
    tensors: {
      'x.f32': { shape: [tricky.length], data: tricky },
      'x.f16': { shape: [tricky.length], data: tricky, dtype: 'F16' },
      'x.bf16': { shape: [tricky.length], data: tricky, dtype: 'BF16' },
      'layer.0.weight': { shape: [3, 4], data: matrix },
      'ids.i64': { shape: [3], data: [1, -5, 2 ** 40], dtype: 'I64' },
    },
    maxShardSize: 100,
  });
  const index = JSON.parse(await readFile(join(ckpt, 'model.safetensors.index.json'), 'utf8')) as { weight_map: Record<string, string> };
  const shards = [...new Set(Object.values(index.weight_map))].sort().map((f) => join(ckpt, f));
  expect(shards.length).toBeGreaterThan(1);
  const py = JSON.parse(runPython('read_safetensors.py', shards)) as {
    metadata: Record<string, string>;
    tensors: Record<
      'ids.i64' | 'layer.0.weight' | 'x.bf16' | 'x.f16' | 'x.f32',
      { dtype: string; shape: number[]; values: JsonNumber[]; bits?: number[]; as_f16_bits?: number[]; as_bf16_bits?: number[] }
    >;
  };
  expect(py.metadata).toEqual({ format: 'pt' });
  expect(Object.keys(py.tensors).sort()).toEqual(['ids.i64', 'layer.0.weight', 'x.bf16', 'x.f16', 'x.f32']);
  expect(py.tensors['layer.0.weight'].shape).toEqual([3, 4]);
  expect(py.tensors['layer.0.weight'].values).toEqual(Array.from(matrix));
  expect(py.tensors['ids.i64'].values).toEqual([1, -5, 2 ** 40]);
  expect(py.tensors['x.f32'].values.map(fromJson)).toEqual(Array.from(tricky));

  // Our half encoders against numpy's float16 and torch's bfloat16 rounding of the same float32 values.
  expect(py.tensors['x.f16'].bits).toEqual(Array.from(encodeF16(tricky)));
  expect(py.tensors['x.f32'].as_f16_bits).toEqual(py.tensors['x.f16'].bits);
  expect(py.tensors['x.bf16'].bits).toEqual(Array.from(encodeBf16(tricky)));
  if (py.tensors['x.f32'].as_bf16_bits !== undefined) {
    // NaN payloads may differ; compare NaN-ness there.
    const ours = py.tensors['x.bf16'].bits!;
    py.tensors['x.f32'].as_bf16_bits.forEach((b, i) => {
      const mine = ours[i]!;
      if (Number.isNaN(tricky[i])) expect((mine & 0x7f80) === 0x7f80 && (mine & 0x7f) !== 0).toBe(true);
      else expect(mine).toBe(b);
    });
  } else {
    console.warn('torch missing: bfloat16 rounding not cross-checked against torch');
  }
});

pythonTest('a file written by hand in Python (F32, F16, BF16, I64, unpadded header) is read here', async () => {
  const file = join(dir, 'python.safetensors');
  const expected = JSON.parse(runPython('write_safetensors.py', [file])) as Record<string, JsonNumber[]>;
  const { tensors, metadata } = await readSafetensors(file);
  expect(metadata).toEqual({ format: 'pt', source: 'hand' });
  expect(tensors.get('matrix')!.shape).toEqual([2, 3]);
  expect(tensors.get('f16')!.dtype).toBe('F16');
  expect(tensors.get('bf16')!.dtype).toBe('BF16');
  for (const [name, values] of Object.entries(expected)) {
    // Python's float64 values of float32 data: compare after rounding to float32.
    expect(Array.from(tensors.get(name)!.data)).toEqual(Array.from(Float32Array.from(values.map(fromJson))));
  }
  expect(Object.is(tensors.get('f16')!.data[5], -0)).toBe(true);
});
