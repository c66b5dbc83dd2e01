import { fileURLToPath } from 'node:url';
import { OPTIONAL_TFJS_ENGINE } from '@drmas/plugin-trainer';
import { definePreset, type Preset, type UserConfig } from '@drmas/core';
import { toolsOrchestraPlugin } from './toolsOrchestra.js';

/** The base checkpoint shipped with the preset (supervised warm-up of `tiny`; rebuild with `npm run build-base`). */
export const BASE_CHECKPOINT = fileURLToPath(new URL('../checkpoints/base/policy', import.meta.url));

/** Defaults of the tools preset; the user's config wins over each key. */
export const TOOLS_DEFAULTS: Partial<UserConfig> = {
  models: {
    policy: {
      rollout: 'auto',
      model: BASE_CHECKPOINT,
      runtime: 'auto',
      optimizer: { lr: 1e-4, weightDecay: 0, maxGradNorm: 1 },
    },
  },
  agents: { assistant: { model: 'policy', sampling: { temperature: 1, topP: 1, maxNewTokens: 80 } } },
  orchestra: { name: 'tools' },
  env: { name: 'tools', seed: 0, maxSteps: 3, tools: { enabled: ['calculator', 'search', 'fs'], testSize: 64 } },
  rollout: { promptsPerStep: 8, samplesPerPrompt: 4 },
  reward: { allocator: 'drmas' },
  algorithm: { advantage: 'drmas' },
  eval: { k: 8, every: 0, atEnd: true, tasks: 64 },
  trainer: { steps: 30, seed: 0, saveEvery: 10, keepLast: 2 },
};

/** `presets: ['tools']`: an Assistant calling tools on env-tools' tasks, with every plugin it needs. */
export const toolsPreset: Preset = {
  name: 'tools',
  plugins: ['algorithms', 'backend-onnx', 'trainer', 'env-tools', 'orchestra', 'report', toolsOrchestraPlugin],
  optionalPlugins: [OPTIONAL_TFJS_ENGINE],
  config: TOOLS_DEFAULTS,
};

export default definePreset(() => toolsPreset);
