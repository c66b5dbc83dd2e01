import { fileURLToPath } from 'node:url';
import { OPTIONAL_TFJS_ENGINE } from '@drmas/plugin-trainer';
import { definePreset, type Preset, type UserConfig } from '@drmas/core';
import { codeOrchestraPlugin } from './codeOrchestraPlugin.js';
import { REFLECTIVE_CODE_TURNS } from './reflectiveCode.js';

/** The base checkpoint shipped with the preset (supervised warm-up of `tiny`; rebuild with `npm run build-base`). */
export const BASE_CHECKPOINT = fileURLToPath(new URL('../checkpoints/base/policy', import.meta.url));

/** Defaults of the code preset; the user's config wins over each key. */
export const CODE_DEFAULTS: Partial<UserConfig> = {
  models: {
    // No `backend`: `auto` trains on onnx on a CPU. From seed 0 the 30-step runs on onnx and on tfjs gave the same
    // outcome at every step and the same held-out avg@8 (18.8%), onnx 2.6x faster per step.
    policy: {
      rollout: 'auto',
      model: BASE_CHECKPOINT,
      runtime: 'auto',
      optimizer: { lr: 1e-4, weightDecay: 0, maxGradNorm: 1 },
    },
  },
  agents: { coder: { model: 'policy', sampling: { temperature: 1, topP: 1, maxNewTokens: 64 } } },
  // maxLoops: code turns at most of the reflective-code workflow; the code orchestra has one.
  orchestra: { name: 'code', maxLoops: REFLECTIVE_CODE_TURNS },
  env: { name: 'code', seed: 0, code: { languages: ['javascript'], testSize: 48, timeoutMs: 1000, memoryMb: 32 } },
  rollout: { promptsPerStep: 8, samplesPerPrompt: 4 },
  reward: { allocator: 'drmas' },
  algorithm: { advantage: 'drmas' },
  eval: { k: 8, every: 0, atEnd: true, tasks: 48 },
  trainer: { steps: 30, seed: 0, saveEvery: 10, keepLast: 2 },
};

/** `presets: ['code']`: a Coder on env-code's tasks, with every plugin it needs. */
export const codePreset: Preset = {
  name: 'code',
  plugins: ['algorithms', 'backend-onnx', 'trainer', 'env-code', 'orchestra', 'report', codeOrchestraPlugin],
  optionalPlugins: [OPTIONAL_TFJS_ENGINE],
  config: CODE_DEFAULTS,
};

export default definePreset(() => codePreset);
