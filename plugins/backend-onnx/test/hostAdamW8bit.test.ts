import { describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OptimizerSettings, WeightTensor } from '@drmas/core';
import { dequantizeBlockwise, dynamicMap, isBlockwise, quantizeBlockwise, emptyBlockwiseCodes } from '@drmas/models';
import { HostAdamW } from '../src/training/HostAdamW.js';

/**
 * `optimizer.moments: 8bit` in HostAdamW: bitsandbytes' AdamW8bit order (dequantize, step in float32, quantize with
 * the new absmax), checked against the float32 optimizer it wraps; bitsandbytes itself is the reference in
 * test/interop/bitsandbytes.test.ts.
 */
const SETTINGS: OptimizerSettings = { lr: 1e-2, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0.01, maxGradNorm: 0, paramGroups: [] };
const SIZE = 20_000; // 78 blocks of 256 and a tail of 32, over two chunks of 16,384

function weights(): Map<string, WeightTensor> {
  return new Map([
    ['big', { shape: [SIZE], data: new Float32Array(SIZE).map((_, i) => Math.sin(i) * 0.1) }],
    ['small', { shape: [100], data: new Float32Array(100).fill(0.3) }],
  ]);
}
function grads(step: number): Map<string, Float32Array> {
  return new Map([
    ['big', new Float32Array(SIZE).map((_, i) => Math.cos(i * (step + 1)) * 1e-3)],
    ['small', new Float32Array(100).fill(1e-2 * (step + 1))],
  ]);
}

describe('HostAdamW with 8-bit moments', () => {
  it("takes the float32 optimizer's first step exactly, then holds the moments it stepped as codes", () => {
    const [eight, full] = [new HostAdamW(), new HostAdamW()];
    const [w8, w32] = [weights(), weights()];
    eight.apply(w8, grads(0), { ...SETTINGS, moments: '8bit' }, 1);
    full.apply(w32, grads(0), SETTINGS, 1);
    // From zero moments the step uses the float32 moments before they are quantized.
    expect(w8.get('big')!.data).toEqual(w32.get('big')!.data);
    const held = eight.snapshot().moments.get('big')!;
    const float = full.snapshot().moments.get('big')!;
    if (!isBlockwise(held) || isBlockwise(float)) throw new Error('expected 8-bit moments for big, float32 for the float32 optimizer');
    const expected = emptyBlockwiseCodes(SIZE);
    quantizeBlockwise(float.expAvg, dynamicMap(true), expected, 0);
    expect(held.expAvg.codes).toEqual(expected.codes);
    expect(held.expAvg.absmax).toEqual(expected.absmax);
    // The small tensor keeps float32 moments, equal to the float32 optimizer's.
    expect(eight.snapshot().moments.get('small')).toEqual(full.snapshot().moments.get('small'));
  });

  it('steps from the dequantized moments: the second step equals a float32 step from them', () => {
    const eight = new HostAdamW();
    const w8 = weights();
    eight.apply(w8, grads(0), { ...SETTINGS, moments: '8bit' }, 1);
    const held = eight.snapshot().moments.get('big')!;
    if (!isBlockwise(held)) throw new Error('expected 8-bit moments');
    // A float32 optimizer holding those dequantized moments at step 1 takes the same second step.
    const replay = new HostAdamW();
    const expAvg = new Float32Array(SIZE);
    const expAvgSq = new Float32Array(SIZE);
    dequantizeBlockwise(held.expAvg, dynamicMap(true), expAvg, 0);
    dequantizeBlockwise(held.expAvgSq, dynamicMap(false), expAvgSq, 0);
    const small = eight.snapshot().moments.get('small')!;
    replay.restore({
      step: 1,
      moments: new Map([
        ['big', { expAvg, expAvgSq }],
        ['small', small],
      ]),
    });
    const wReplay = new Map([...w8].map(([name, w]) => [name, { shape: w.shape, data: w.data.slice() }]));
    eight.apply(w8, grads(1), { ...SETTINGS, moments: '8bit' }, 1);
    replay.apply(wReplay, grads(1), SETTINGS, 1);
    expect(w8.get('big')!.data).toEqual(wReplay.get('big')!.data);
  });

  it('restores a snapshot as a copy and resumes from its saved codes unchanged', async () => {
    const eight = new HostAdamW();
    const w = weights();
    eight.apply(w, grads(0), { ...SETTINGS, moments: '8bit' }, 1);
    const before = eight.snapshot();
    eight.apply(w, grads(1), { ...SETTINGS, moments: '8bit' }, 1);
    eight.restore(before);
    expect(eight.snapshot()).toEqual(before);

    const dir = await mkdtemp(join(tmpdir(), 'drmas-hostadamw8-'));
    try {
      for (const [name, contents] of Object.entries(eight.serialize(w, { ...SETTINGS, moments: '8bit' })))
        await writeFile(join(dir, name), contents as Uint8Array | string);
      const loaded = new HostAdamW();
      await loaded.load(dir, w);
      expect(loaded.snapshot()).toEqual(before);
      // A float32 run resuming from its own float32 file keeps float32 moments (no round trip through 8 bits).
      const full = new HostAdamW();
      full.apply(w, grads(0), SETTINGS, 1);
      for (const [name, contents] of Object.entries(full.serialize(w, SETTINGS)))
        await writeFile(join(dir, name), contents as Uint8Array | string);
      const resumed = new HostAdamW();
      await resumed.load(dir, w);
      expect(resumed.snapshot()).toEqual(full.snapshot());
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
