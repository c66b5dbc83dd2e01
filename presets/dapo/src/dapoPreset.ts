import { definePreset, type Preset, type UserConfig } from '@drmas/core';

/**
 * DAPO (Yu et al. 2025, https://arxiv.org/abs/2503.14476) as settings, the way veRL's recipe sets it: GRPO
 * advantages, clip-higher (0.2 below, 0.28 above), the token-mean loss, and dynamic sampling (groups whose outcomes
 * are all equal are dropped and more are sampled, up to `maxRounds` rollouts). Listed after a workflow preset,
 * these win over its algorithm settings; the user's own config wins over them.
 */
export const DAPO_SETTINGS: Partial<UserConfig> = {
  algorithm: {
    advantage: 'grpo',
    loss: { clipRatioLow: 0.2, clipRatioHigh: 0.28, aggregation: 'token-mean' },
    dynamicSampling: { enabled: true, maxRounds: 10 },
  },
};

/** `presets: ['math', 'dapo']`: no plugins of its own; the algorithms plugin comes with the workflow preset. */
export const dapoPreset: Preset = { name: 'dapo', config: DAPO_SETTINGS };

export default definePreset(() => dapoPreset);
