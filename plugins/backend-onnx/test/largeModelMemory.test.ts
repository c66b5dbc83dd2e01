import { describe, expect, it } from '@jest/globals';
import { loadModelWeights, parseModelConfig } from '@drmas/models';
import { PUBLISHED_MODELS } from '../../../test/support/publishedConfigs.js';
import { loadOnnxRuntime } from '../src/ExecutionProvider.js';
import { GraphBuilder } from '../src/onnx/GraphBuilder.js';
import {
  defaultMicroBatchTokens,
  largeModelSessionOptions,
  releaseRunOutputs,
  runOverheadBytes,
  backwardSegments,
} from '../src/training/LargeModelMemory.js';

const qwen = parseModelConfig(PUBLISHED_MODELS['Qwen2.5-0.5B']!.config);

describe("a large model's memory settings on onnx", () => {
  it('micro-batches at Qwen2.5-0.5B: 1/14 of the budget, at least 282 tokens, at least the widest row; none below the shared layout', async () => {
    // Per token: 24 layers x (4 x 896 + 2 x 2 x 64 + 3 x 4,864 = 18,432 floats) + 2 x 16,384 (the head's chunk)
    // = 475,136 floats = 1,900,544 bytes; 2^29 / 1,900,544 = 282.5.
    expect(defaultMicroBatchTokens(qwen, 0)).toBe(282);
    // Under 14 x 2^29 = 7 GiB of budget, the least bound holds.
    expect(defaultMicroBatchTokens(qwen, 6 * 2 ** 30)).toBe(282);
    // 75% of 23.5 GiB = 18,924,699,648 bytes; / 14 = 1,351,764,260; / 1,900,544 = 711.3.
    expect(defaultMicroBatchTokens(qwen, 0.75 * 23.5 * 2 ** 30)).toBe(711);
    // 12 GiB: 920,350,134 / 1,900,544 = 484.3.
    expect(defaultMicroBatchTokens(qwen, 12 * 2 ** 30)).toBe(484);
    // A row wider than the bound: micro-batches up to its width, which it alone takes anyway.
    expect(defaultMicroBatchTokens(qwen, 0, 500)).toBe(500);
    expect(defaultMicroBatchTokens(qwen, 0, 200)).toBe(282);
    const { config: tiny } = await loadModelWeights({ model: 'tiny' });
    expect(defaultMicroBatchTokens(tiny, 0.75 * 23.5 * 2 ** 30, 500)).toBeUndefined();
  });

  it("sessions without the CPU arena at Qwen2.5-0.5B unless the model's options say otherwise; tiny's options untouched", async () => {
    expect(largeModelSessionOptions(qwen, undefined)).toEqual({ enableCpuMemArena: false });
    expect(largeModelSessionOptions(qwen, { intraOpNumThreads: 1 })).toEqual({ enableCpuMemArena: false, intraOpNumThreads: 1 });
    expect(largeModelSessionOptions(qwen, { enableCpuMemArena: true })).toEqual({ enableCpuMemArena: true });
    const { config: tiny } = await loadModelWeights({ model: 'tiny' });
    expect(largeModelSessionOptions(tiny, undefined)).toBeUndefined();
  });

  it("a run's overhead: the returned gradients beyond one micro-batch's activations, 300 MiB of runtime", () => {
    const shape = { ...qwen, numHeads: 14, maxPositions: 32768, tiedEmbeddings: true, source: 'test' };
    // In one graph: 493,961,216 matrix weights x 4 = 1,975,844,864 bytes of gradients; one micro-batch: 2 x 282 tokens
    // x 1,900,544 = 1,071,906,816; beyond it 903,938,048; + 300 x 2^20 = 314,572,800.
    expect(runOverheadBytes(shape, 1).bytes).toBe(903_938_048 + 314_572_800);
    // Segmented (auto): a layer's projections are 896 x 64 x 2 x (14 + 2) + 3 x 896 x 4,864 = 14,909,440 values,
    // 59,637,760 bytes; the head 151,936 x 896 x 4 = 544,538,624. The top segment takes the head and 8 layers
    // (1,021,640,704; 9 would pass 1,071,906,816), the bottom one the other 16 (954,204,160): nothing beyond.
    expect(backwardSegments(shape, 'auto', true)).toEqual([
      [0, 16],
      [16, 24],
    ]);
    const segmented = runOverheadBytes(shape);
    expect(segmented.bytes).toBe(314_572_800);
    expect(segmented.reason).toContain("the largest of 2 segments' gradients a run returns 974 MiB");
  });

  describe("a run's returned outputs", () => {
    /** A session adding 1 to a float vector of `n` elements, its output bound to `into`. */
    async function plusOne(n: number) {
      const ort = await loadOnnxRuntime();
      const g = new GraphBuilder('plus-one');
      g.output(g.op('Add', [g.input('x', 'float', [n]), g.scalar(1)]), 'y', 'float', [n]);
      const session = await ort.InferenceSession.create(g.toModelProto(), { enableCpuMemArena: false });
      const x = new Float32Array(n).fill(2);
      const into = new Float32Array(n);
      const run = () => session.run({ x: new ort.Tensor('float32', x, [n]) }, { y: new ort.Tensor('float32', into, [n]) });
      return { run, into, release: () => session.release() };
    }
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

    it('onnxruntime-node returns a copy of an output bound to a buffer (why the trainer frees them)', async () => {
      const { run, into, release } = await plusOne(4);
      const out = await run();
      expect(Array.from(into)).toEqual([3, 3, 3, 3]);
      into[0] = 99;
      // Written into the bound buffer and returned in another: a later write to one does not show in the other.
      expect((out['y']!.data as Float32Array)[0]).toBe(3);
      await release();
    });

    it("at Qwen2.5-0.5B each run's copy is collected before the next run", async () => {
      const { run, release } = await plusOne(1024);
      for (let k = 0; k < 3; k++) {
        const out = await run();
        const copy = new WeakRef((out['y']!.data as Float32Array).buffer);
        // A WeakRef keeps its target through the job that made it: the release comes in the next one, as a run's would.
        await nextTurn();
        releaseRunOutputs(qwen, out);
        expect(copy.deref()).toBeUndefined();
      }
      await release();
    });
  });
});
