import { describe, expect, it } from '@jest/globals';
import { loadModelWeights, parseModelConfig } from '@drmas/models';
import { PUBLISHED_MODELS } from '../../../test/support/publishedConfigs.js';
import { defaultMicroBatchTokens, largeModelSessionOptions, runOverheadBytes } from '../src/training/LargeModelMemory.js';

const qwen = parseModelConfig(PUBLISHED_MODELS['Qwen2.5-0.5B']!.config);

describe("a large model's memory settings on onnx", () => {
  it('micro-batches of 282 tokens at Qwen2.5-0.5B, none below the shared layout', async () => {
    // Per token: 24 layers x (4 x 896 + 2 x 2 x 64 + 3 x 4,864 = 18,432 floats) + 2 x 16,384 (the head's chunk)
    // = 475,136 floats = 1,900,544 bytes; 2^29 / 1,900,544 = 282.5.
    expect(defaultMicroBatchTokens(qwen)).toBe(282);
    const { config: tiny } = await loadModelWeights({ model: 'tiny' });
    expect(defaultMicroBatchTokens(tiny)).toBeUndefined();
  });

  it("sessions without the CPU arena at Qwen2.5-0.5B unless the model's options say otherwise; tiny's options untouched", async () => {
    expect(largeModelSessionOptions(qwen, undefined)).toEqual({ enableCpuMemArena: false });
    expect(largeModelSessionOptions(qwen, { intraOpNumThreads: 1 })).toEqual({ enableCpuMemArena: false, intraOpNumThreads: 1 });
    expect(largeModelSessionOptions(qwen, { enableCpuMemArena: true })).toEqual({ enableCpuMemArena: true });
    const { config: tiny } = await loadModelWeights({ model: 'tiny' });
    expect(largeModelSessionOptions(tiny, undefined)).toBeUndefined();
  });

  it("a run's overhead: the returned gradients, three [vocab, hidden] gradients, 300 MiB of runtime", () => {
    const shape = { ...qwen, numHeads: 14, maxPositions: 32768, tiedEmbeddings: true, source: 'test' };
    // 493,961,216 matrix weights x 4 = 1,975,844,864; 3 x 151,936 x 896 x 4 = 1,633,615,872; 300 x 2^20 = 314,572,800.
    expect(runOverheadBytes(shape).bytes).toBe(1_975_844_864 + 1_633_615_872 + 314_572_800);
  });
});
