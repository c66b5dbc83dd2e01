/**
 * `optimizer.moments: 8bit` against bitsandbytes 0.50.2 (scripts/python/peers.txt), its PyTorch kernels on the CPU
 * (test/interop/python/bnb_adamw8bit.py): the dynamic maps bit for bit, `quantize_blockwise`'s codes and absmax
 * exactly, and `AdamW8bit` over a few steps (a tensor with a short last block, a zero block and outliers; one under
 * its min_8bit_size) against drmas's `HostAdamW`: the codes, absmax and weights where bitsandbytes leaves them, and
 * closer than drmas's own float32 moments come.
 */
import { afterAll, expect, test } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SeededRng, type OptimizerSettings, type WeightTensor } from '@drmas/core';
import { HostAdamW } from '@drmas/plugin-backend-onnx';
import { dynamicMap, emptyBlockwiseCodes, isBlockwise, quantizeBlockwise } from '@drmas/models';
import { describeInterop } from '../support/interopSuite.js';
import { TempProject } from '../support/tempProject.js';
import { runPython } from './support.js';

const scratch = new TempProject('interop-bitsandbytes');
afterAll(() => scratch.dispose());

/** A tensor of 70,000 values (273 blocks and a tail of 112) and one of 1,000 (under min_8bit_size: float32 moments). */
const SIZES = [70_000, 1_000];
const STEPS = 5;
const SETTINGS: OptimizerSettings = { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0.01, maxGradNorm: 0, paramGroups: [] };

function read(dir: string, file: string): Buffer {
  return readFileSync(path.join(dir, file));
}
const f32 = (bytes: Buffer) => new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4).slice();

/** Gaussian-ish values: the sum of three uniforms, scaled. */
function noise(rng: SeededRng, n: number, scale: number): Float32Array {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (rng.next() + rng.next() + rng.next() - 1.5) * scale;
  return out;
}

/** Gradients of one step: noise over a few decades, an outlier every 997 values, one block all zero. */
function gradients(rng: SeededRng, step: number): Float32Array {
  const total = SIZES.reduce((a, b) => a + b, 0);
  const g = noise(rng, total, 1e-3 * (step + 1));
  for (let i = 0; i < total; i += 997) g[i] = (rng.next() - 0.5) * 2;
  for (let i = 0; i < total; i += 3) g[i]! *= 1e-3;
  g.fill(0, 512, 768);
  return g;
}

function drmasRun(init: Float32Array, grads: Float32Array[], moments: 'float32' | '8bit') {
  const optimizer = new HostAdamW();
  const weights = new Map<string, WeightTensor>();
  let at = 0;
  SIZES.forEach((size, i) => {
    weights.set(`p${i}`, { shape: [size], data: init.slice(at, at + size) });
    at += size;
  });
  for (const g of grads) {
    const byName = new Map<string, Float32Array>();
    let from = 0;
    SIZES.forEach((size, i) => {
      byName.set(`p${i}`, g.subarray(from, from + size));
      from += size;
    });
    optimizer.apply(weights, byName, { ...SETTINGS, moments }, 1);
  }
  const state = optimizer.snapshot();
  return { weights, moments: (name: string) => state.moments.get(name)! };
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}

describeInterop('bitsandbytes AdamW8bit', 'peers', (python) => {
  test('maps, blockwise codes and five AdamW8bit steps as bitsandbytes takes them', () => {
    const dir = scratch.dir;
    const rng = new SeededRng(7);
    const total = SIZES.reduce((a, b) => a + b, 0);
    const init = noise(rng, total, 0.05);
    const grads = Array.from({ length: STEPS }, (_, step) => gradients(rng, step));
    // Values to quantize: a short last block, a zero block, entries on the map itself and between its neighbours.
    const values = noise(rng, 256 * 9 + 77, 1);
    values.fill(0, 256, 512);
    dynamicMap(true).forEach((entry, i) => (values[1024 + i] = entry));
    writeFileSync(
      path.join(dir, 'case.json'),
      JSON.stringify({
        sizes: SIZES,
        steps: STEPS,
        lr: SETTINGS.lr,
        betas: SETTINGS.betas,
        eps: SETTINGS.eps,
        weight_decay: SETTINGS.weightDecay,
      }),
    );
    writeFileSync(path.join(dir, 'init.f32'), init);
    writeFileSync(path.join(dir, 'grads.f32'), Buffer.concat(grads.map((g) => Buffer.from(g.buffer))));
    writeFileSync(path.join(dir, 'quantize.f32'), values);
    const versions = runPython<{ bitsandbytes: string }>(python, 'bnb_adamw8bit.py', [dir]);
    expect(versions.bitsandbytes).toBe('0.50.2');

    expect(dynamicMap(true)).toEqual(f32(read(dir, 'qmap_signed.f32')));
    expect(dynamicMap(false)).toEqual(f32(read(dir, 'qmap_unsigned.f32')));

    const codes = emptyBlockwiseCodes(values.length);
    quantizeBlockwise(values, dynamicMap(true), codes, 0);
    expect(codes.codes).toEqual(new Uint8Array(read(dir, 'quantize.u8')));
    expect(codes.absmax).toEqual(f32(read(dir, 'quantize_absmax.f32')));

    const eight = drmasRun(init, grads, '8bit');
    const full = drmasRun(init, grads, 'float32');
    // The large tensor: 8-bit state as bitsandbytes holds it. drmas rounds each AdamW operation to float32 in tfjs's
    // order where torch fuses some, so a value on the edge of two codes may take the neighbour: at most one code
    // apart, and rarely.
    const held = eight.moments('p0');
    if (!isBlockwise(held)) throw new Error('p0 kept float32 moments');
    for (const [mine, codesFile, absmaxFile] of [
      [held.expAvg, 'p0.state1.u8', 'p0.absmax1.f32'],
      [held.expAvgSq, 'p0.state2.u8', 'p0.absmax2.f32'],
    ] as const) {
      const theirs = new Uint8Array(read(dir, codesFile));
      let differ = 0;
      for (let i = 0; i < theirs.length; i++) {
        if (mine.codes[i] === theirs[i]) continue;
        differ++;
        expect(Math.abs(mine.codes[i]! - theirs[i]!)).toBe(1);
      }
      expect(differ).toBeLessThan(theirs.length * 1e-3);
      const absmax = f32(read(dir, absmaxFile));
      for (let b = 0; b < absmax.length; b++) expect(Math.abs(mine.absmax[b]! - absmax[b]!)).toBeLessThanOrEqual(absmax[b]! * 1e-5);
    }
    const bnbWeights = f32(read(dir, 'p0.f32'));
    const eightGap = maxAbsDiff(eight.weights.get('p0')!.data, bnbWeights);
    const fullGap = maxAbsDiff(full.weights.get('p0')!.data, bnbWeights);
    expect(eightGap).toBeLessThan(2e-5);
    // The quantization error of the moments moves weights far more than that: the comparison can tell them apart.
    expect(fullGap).toBeGreaterThan(20 * eightGap);

    // The small tensor keeps float32 moments on both sides.
    const small = eight.moments('p1');
    expect(isBlockwise(small)).toBe(false);
    if (isBlockwise(small)) return;
    expect(maxAbsDiff(small.expAvg, f32(read(dir, 'p1.state1.f32')))).toBeLessThan(1e-7);
    expect(maxAbsDiff(eight.weights.get('p1')!.data, f32(read(dir, 'p1.f32')))).toBeLessThan(1e-6);
  });
});
