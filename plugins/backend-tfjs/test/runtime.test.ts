import { RuntimeSelector, RuntimeUnavailableError, builtinRuntimeCandidates } from '../src/runtime/RuntimeSelector.js';

describe('RuntimeSelector', () => {
  it('lists candidates by priority: tfjs-node-gpu, tfjs-node, wasm, cpu', () => {
    expect(new RuntimeSelector().names).toEqual(['tfjs-node-gpu', 'tfjs-node', 'wasm', 'cpu']);
  });

  it('auto picks the first available runtime and initialises each candidate once', async () => {
    let tries = 0;
    const selector = new RuntimeSelector([
      {
        name: 'broken',
        priority: 100,
        backend: 'none',
        initialize: async () => {
          tries++;
          throw new Error('not installed');
        },
      },
      ...builtinRuntimeCandidates().filter((c) => c.name === 'wasm' || c.name === 'cpu'),
    ]);
    const chosen = await selector.select('auto');
    expect(chosen.name).toBe('wasm');
    expect(chosen.description).toMatch(/wasm \(simd, 1 thread\)/);
    await selector.select('auto');
    await selector.select('cpu');
    expect((await selector.select('wasm')).name).toBe('wasm');
    expect(tries).toBe(1);
  });

  it('an unavailable requested runtime is an error saying why', async () => {
    const selector = new RuntimeSelector();
    const error = await selector.select('tfjs-node').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RuntimeUnavailableError);
    expect((error as Error).message).toMatch(/tfjs-node: .*@tensorflow\/tfjs-node/);
    await expect(selector.select('tpu')).rejects.toThrow(/unknown runtime; known: auto, tfjs-node-gpu, tfjs-node, wasm, cpu/);
  });
});
