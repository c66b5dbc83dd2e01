import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isBlockwise, readAdamWState, serializeAdamWState, type BlockwiseAdamWMoments } from '../src/checkpoint/adamWStateFiles.js';
import { dequantizeBlockwise, dynamicMap, emptyBlockwiseCodes, quantizeBlockwise } from '../src/optimizer/blockwise8bit.js';
import { serializeSafetensors } from '../src/checkpoint/safetensors.js';

/**
 * bitsandbytes' blockwise 8-bit state, checked by hand here (test/interop/bitsandbytes.test.ts checks it against
 * bitsandbytes itself): the maps' entries from create_dynamic_map's formula, a block's codes worked out from the
 * map, and the optimizer-state files holding them.
 */

/** The signed map's entries between 0.1 and 1: the means of linspace(0.1, 1, 65)'s neighbours, 0.1 + (k + 0.5) x 0.9 / 64. */
const entry = (k: number) => 0.1 + (k + 0.5) * (0.9 / 64);

describe('dynamic maps', () => {
  test('the signed map: 127 negative entries, 0, 127 positive ones and 1; its largest magnitudes as worked out', () => {
    const map = dynamicMap(true);
    expect(map).toHaveLength(256);
    expect([...map]).toEqual([...map].sort((a, b) => a - b));
    expect(map[127]).toBe(0);
    expect(map[255]).toBe(1);
    expect(map[0]).toBeCloseTo(-entry(63), 7);
    expect(map[254]).toBeCloseTo(entry(63), 7);
    // The smallest magnitude: i = 0 has one fraction item, the mean of 0.1 and 1 at 1e-6.
    expect(map[128]).toBeCloseTo(0.55e-6, 12);
  });

  test('the unsigned map: 0, then 254 positive entries from 3.25e-7, and 1', () => {
    const map = dynamicMap(false);
    expect(map[0]).toBe(0);
    // i = 0: linspace(0.1, 1, 3) is 0.1, 0.55, 1; its means 0.325 and 0.775, at 1e-6.
    expect(map[1]).toBeCloseTo(0.325e-6, 13);
    expect(map[2]).toBeCloseTo(0.775e-6, 13);
    expect(map[255]).toBe(1);
    expect(new Set(map).size).toBe(256);
  });
});

describe('blockwise codes', () => {
  test("a block's values as the nearest entry of value / absmax, and back", () => {
    const values = new Float32Array(300);
    values[0] = 2;
    values[1] = 1; // 0.5 of absmax: nearest entry(28) = 0.50078125 (entry(27) = 0.48671875)
    values[2] = -0.5; // -0.25: nearest -entry(10) = -0.24765625 (entry(11) = 0.26171875)
    values[256] = -3; // the short second block (44 values): its absmax 3, divided by
    values[257] = 0.75; // 0.25: entry(10) again
    const codes = emptyBlockwiseCodes(300);
    quantizeBlockwise(values, dynamicMap(true), codes, 0);
    expect([...codes.absmax]).toEqual([2, 3]);
    const back = new Float32Array(300);
    dequantizeBlockwise(codes, dynamicMap(true), back, 0);
    expect(back[0]).toBe(2);
    expect(back[1]).toBeCloseTo(2 * entry(28), 6);
    expect(back[2]).toBeCloseTo(-2 * entry(10), 6);
    expect(back[3]).toBe(0);
    // -1 has no entry of its own in the signed map: the most negative one, -entry(63).
    expect(back[256]).toBeCloseTo(-3 * entry(63), 6);
    expect(back[257]).toBeCloseTo(3 * entry(10), 6);
  });

  test("every code is the count of the map's float32 midpoints below the scaled value (torch.bucketize), on both maps", () => {
    for (const signed of [true, false]) {
      const map = dynamicMap(signed);
      const mids = Array.from({ length: 255 }, (_, i) => Math.fround(map[i]! + map[i + 1]!) / 2);
      // One block whose absmax is 1 (values taken as they are): every midpoint, its float32 neighbours, the entries,
      // zeros of both signs and values spread over the decades.
      const values: number[] = [1, 0, -0];
      for (const mid of mids) {
        const bits = new Float32Array([mid]);
        const u = new Uint32Array(bits.buffer);
        values.push(mid);
        u[0]! += 1;
        values.push(bits[0]!);
        u[0]! -= 2;
        values.push(bits[0]!);
      }
      for (let k = 0; values.length % 256 !== 0 || k < 2000; k++) values.push((signed ? 1 : 0.5) * Math.sin(k * 7.3) * 10 ** -(k % 8));
      const block = Float32Array.from(values.map((v) => (signed ? v : Math.abs(v))));
      const codes = emptyBlockwiseCodes(block.length);
      quantizeBlockwise(block, map, codes, 0);
      const absmax = codes.absmax;
      block.forEach((v, i) => {
        const scale = absmax[Math.floor(i / 256)]!;
        const x = Math.max(-1, Math.min(1, Math.fround(v * Math.fround(1 / scale))));
        expect([i, codes.codes[i]]).toEqual([i, mids.filter((mid) => mid < x).length]);
      });
    }
  });

  test('a zero block keeps absmax 0 and dequantizes to zeros; dequantizing from an offset reads its own blocks', () => {
    const values = new Float32Array(512);
    values[300] = 4;
    const codes = emptyBlockwiseCodes(512);
    quantizeBlockwise(values, dynamicMap(false), codes, 0);
    expect([...codes.absmax]).toEqual([0, 4]);
    const tail = new Float32Array(256);
    dequantizeBlockwise(codes, dynamicMap(false), tail, 256);
    expect(tail[44]).toBe(4);
    expect(tail.reduce((a, b) => a + Math.abs(b), 0)).toBe(4);
  });
});

describe('8-bit moments in optimizer.safetensors', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'drmas-adamw8-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  test('saved as U8 codes and float32 absmax, read back as held or dequantized', async () => {
    const size = 4096 + 10;
    const first = new Float32Array(size).map((_, i) => Math.sin(i) * 1e-3);
    const second = new Float32Array(size).map((_, i) => (1 + Math.cos(i)) * 1e-6);
    const held: BlockwiseAdamWMoments = { expAvg: emptyBlockwiseCodes(size), expAvgSq: emptyBlockwiseCodes(size) };
    quantizeBlockwise(first, dynamicMap(true), held.expAvg, 0);
    quantizeBlockwise(second, dynamicMap(false), held.expAvgSq, 0);
    const files = serializeAdamWState(3, [['w', held]], () => [size], undefined);
    for (const [name, contents] of Object.entries(files)) await writeFile(join(dir, name), contents as Uint8Array | string);

    const bytes = await readFile(join(dir, 'optimizer.safetensors'));
    const headerLength = Number(bytes.readBigUInt64LE(0));
    const header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString('utf8')) as Record<string, { dtype: string; shape: number[] }>;
    expect(header['w.exp_avg']).toMatchObject({ dtype: 'U8', shape: [size] });
    expect(header['w.exp_avg.absmax']).toMatchObject({ dtype: 'F32', shape: [17] });
    expect(header['w.exp_avg_sq.absmax']).toMatchObject({ dtype: 'F32', shape: [17] });

    const stored = await readAdamWState(dir, [['w', [size]]], 'stored');
    const back = stored.moments.get('w')!;
    expect(isBlockwise(back)).toBe(true);
    if (!isBlockwise(back)) return;
    expect(back.expAvg.codes).toEqual(held.expAvg.codes);
    expect(back.expAvgSq.absmax).toEqual(held.expAvgSq.absmax);

    const float = await readAdamWState(dir, [['w', [size]]]);
    const values = new Float32Array(size);
    dequantizeBlockwise(held.expAvg, dynamicMap(true), values, 0);
    expect(float.moments.get('w')!.expAvg).toEqual(values);
  });

  test('8-bit codes without their absmax are refused, naming the tensor, the file and the block count', async () => {
    const codes = new Uint8Array(5000).fill(3);
    await writeFile(
      join(dir, 'optimizer.safetensors'),
      serializeSafetensors({
        'w.exp_avg': { shape: [5000], data: codes, dtype: 'U8' },
        'w.exp_avg_sq': { shape: [5000], data: codes, dtype: 'U8' },
      }),
    );
    await writeFile(join(dir, 'optimizer.json'), JSON.stringify({ type: 'adamw', step: 1, settings: null }));
    await expect(readAdamWState(dir, [['w', [5000]]])).rejects.toMatchObject({
      code: 'CHECKPOINT_INVALID',
      file: join(dir, 'optimizer.safetensors'),
      message: expect.stringContaining("'w.exp_avg' holds 8-bit codes but 'w.exp_avg.absmax' is missing or not 20 values"),
    });
  });

  test('float32 moments read for an 8-bit optimizer are quantized; a tensor under 4,096 values stays float32', async () => {
    const big = new Float32Array(5000).map((_, i) => (i % 7) * 1e-4);
    const small = new Float32Array(10).fill(0.5);
    const files = serializeAdamWState(
      1,
      [
        ['big', { expAvg: big, expAvgSq: big }],
        ['small', { expAvg: small, expAvgSq: small }],
      ],
      (name) => (name === 'big' ? [5000] : [10]),
      undefined,
    );
    for (const [name, contents] of Object.entries(files)) await writeFile(join(dir, name), contents as Uint8Array | string);
    const state = await readAdamWState(
      dir,
      [
        ['big', [5000]],
        ['small', [10]],
      ],
      '8bit',
    );
    const bigHeld = state.moments.get('big')!;
    expect(isBlockwise(bigHeld)).toBe(true);
    if (isBlockwise(bigHeld)) expect(bigHeld.expAvg.absmax[0]).toBeCloseTo(6e-4, 9);
    expect(isBlockwise(state.moments.get('small')!)).toBe(false);
  });
});
