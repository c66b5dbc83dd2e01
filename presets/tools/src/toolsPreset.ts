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
  // `topk`: the search tool's passages per search (env-search's key).
  env: {
    name: 'tools',
    seed: 0,
    maxRounds: 3,
    topk: 1,
    tools: { enabled: ['calculator', 'search', 'fs'], kinds: ['arithmetic', 'lookup', 'file'], testSize: 64 },
  },
  rollout: { promptsPerStep: 8, samplesPerPrompt: 4 },
  reward: { allocator: 'drmas' },
  algorithm: { advantage: 'drmas' },
  eval: { k: 8, every: 0, atEnd: true, tasks: 64 },
  trainer: { steps: 30, seed: 0, saveEvery: 10, keepLast: 2 },
};

/**
 * `presets: ['tools']`: an Assistant calling tools on env-tools' tasks, with every plugin it needs (env-search
 * contributes the `search` tool and its `lookup` tasks, env-code the `python` tool).
 */
export const toolsPreset: Preset = {
  name: 'tools',
  plugins: ['algorithms', 'backend-onnx', 'trainer', 'env-tools', 'env-search', 'env-code', 'orchestra', 'report', toolsOrchestraPlugin],
  optionalPlugins: [OPTIONAL_TFJS_ENGINE],
  config: TOOLS_DEFAULTS,
};

export default definePreset(() => toolsPreset);
