import { describe, expect, test } from '@jest/globals';
import { resolveConfig } from '@drmas/core';
import algorithmsPlugin from '@drmas/plugin-algorithms';
import { TempProject } from '../../../test/support/tempProject.js';

describe('@drmas/preset-dapo', () => {
  const project = new TempProject('dapo');
  afterAll(() => project.dispose());

  test('after a workflow preset, by name: GRPO advantages, clip-higher, token-mean loss and dynamic sampling', async () => {
    project.write({ 'drmas.config.json': { presets: ['math', 'dapo'], trainer: { steps: 1 } } });
    const { config, presets } = await resolveConfig({ cwd: project.dir });
    expect(presets.map((p) => p.packageName)).toEqual(['@drmas/preset-math', '@drmas/preset-dapo']);
    expect(config.algorithm).toMatchObject({
      advantage: 'grpo',
      loss: { clipRatioLow: 0.2, clipRatioHigh: 0.28, aggregation: 'token-mean' },
      dynamicSampling: { enabled: true, maxRounds: 10 },
    });
  });

  test("the user's own settings win over the layer", async () => {
    const { config } = await resolveConfig({
      cwd: project.dir,
      inline: { presets: ['dapo'], plugins: [algorithmsPlugin()], algorithm: { advantage: 'drmas', loss: { clipRatioHigh: 0.3 } } },
    });
    expect(config.algorithm).toMatchObject({
      advantage: 'drmas',
      loss: { clipRatioLow: 0.2, clipRatioHigh: 0.3 },
      dynamicSampling: { enabled: true },
    });
  });

  test('alone, without a plugin that declares the algorithm keys, the config says which plugin to add', async () => {
    await expect(resolveConfig({ cwd: project.dir, inline: { presets: ['dapo'] } })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining('algorithm.loss: unknown key'),
    });
  });
});
