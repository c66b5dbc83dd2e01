import { describe, expect, test } from '@jest/globals';
import os from 'node:os';
import { BackendFactory, formatBytes, Kernel, parseByteSize, resolveMemoryBudget, type ResolvedConfig } from '@drmas/core';

function config(trainer: Record<string, unknown> = {}, models: ResolvedConfig['models'] = {}): ResolvedConfig {
  return {
    presets: [],
    plugins: [],
    models,
    agents: {},
    algorithm: {},
    trainer: { steps: 1, seed: 0, outputDir: 'runs', saveEvery: 0, keepLast: 3, ...trainer },
    eval: { every: 0, atEnd: false, atStart: false },
    env: { seed: 0 },
  };
}

/** A kernel with a backend `small-heap` whose models can use at most 3 GiB, as tfjs on wasm reports 4 GiB. */
function kernelWith(cfg: ResolvedConfig): Kernel {
  const kernel = new Kernel();
  const factory: BackendFactory = {
    name: 'small-heap',
    capabilities: ['sample', 'train'],
    memoryLimit: () => ({ bytes: 3 * 2 ** 30, reason: "the heap's 3 GiB" }),
    priority: () => 1,
    create: () => Promise.reject(new Error('not used')),
  };
  kernel.configure(cfg, [
    {
      plugin: { name: 'heap', register: (ctx) => ctx.provide(BackendFactory, 'small-heap', factory), apply() {} },
      key: 'plugins[0]',
      listedIn: 'test',
      request: 'heap',
      resolvedFrom: 'inline',
    },
  ]);
  return kernel;
}

describe('trainer.memoryBudget', () => {
  test.each([
    ['8GiB', 8 * 1024 ** 3],
    ['512 MiB', 512 * 1024 ** 2],
    ['4GB', 4e9],
    ['1.5TiB', 1.5 * 1024 ** 4],
    ['100KB', 1e5],
    ['2048', 2048],
  ])('%s is %d bytes', (text, bytes) => {
    expect(parseByteSize(text)).toBe(bytes);
  });

  test.each(['lots', '8 gib', 'GiB', '-1GiB', '1e9', '8GiBs'])('%s is not a size', (text) => {
    expect(() => parseByteSize(text)).toThrow('not a size');
  });

  test.each([
    [1023, '1023 B'],
    [1024, '1 KiB'],
    [10_267_656_192, '9.56 GiB'],
    [3 * 2 ** 40, '3 TiB'],
  ])('%d bytes print as %s', (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });

  test('a set budget is taken as written', () => {
    const cfg = config({ memoryBudget: '6GiB' });
    expect(resolveMemoryBudget(cfg, kernelWith(cfg))).toEqual({ bytes: 6 * 2 ** 30, description: 'trainer.memoryBudget 6GiB' });
  });

  test("the default is 75% of the machine's memory, lowered to a backend's limit for a model on it", () => {
    const bare = config();
    expect(resolveMemoryBudget(bare, kernelWith(bare)).bytes).toBe(0.75 * os.totalmem());
    const onSmallHeap = config({}, { policy: { backend: 'small-heap', model: 'tiny', runtime: 'auto' } });
    const expected = Math.min(0.75 * os.totalmem(), 3 * 2 ** 30);
    const budget = resolveMemoryBudget(onSmallHeap, kernelWith(onSmallHeap));
    expect(budget.bytes).toBe(expected);
    if (expected < 0.75 * os.totalmem())
      expect(budget.description).toBe("trainer.memoryBudget's default for model policy: the heap's 3 GiB");
    // backend: auto is judged by the engine it ranks first, here the only one that trains.
    const onAuto = config({}, { policy: { backend: 'auto', model: 'tiny', runtime: 'auto' } });
    expect(resolveMemoryBudget(onAuto, kernelWith(onAuto)).bytes).toBe(expected);
  });
});
