import { fileURLToPath } from 'node:url';
import { OPTIONAL_TFJS_ENGINE } from '@drmas/plugin-trainer';
import { definePreset, type Preset, type UserConfig } from '@drmas/core';
import { mathWorkflowsPlugin } from './mathFourAgent.js';
import { SOLVER_PROMPT, VERIFIER_PROMPT } from './mathPrompts.js';

export { SOLVER_PROMPT, VERIFIER_PROMPT } from './mathPrompts.js';

/** The base checkpoint shipped with the preset (supervised warm-up of `tiny`; rebuild with `npm run build-base`). */
export const BASE_CHECKPOINT = fileURLToPath(new URL('../checkpoints/base/policy', import.meta.url));

/** Defaults of the math preset; the user's config wins over each key. */
export const MATH_DEFAULTS: Partial<UserConfig> = {
  models: {
    // lr 3e-5: on the main job's budget, 1e-4 took the held-out avg@16 from 21.3% to 13.6%; 3e-5 gave 22.5%.
    // The final norm at 2e-2 lets RL scale the logits (sharpen) within the budget: 24.5%, 25.0%, 23.7% at 1e-2, 2e-2, 5e-2.
    // No `backend`: `auto` trains on onnx on a CPU (twice tfjs-wasm's speed, same learning), tfjs on tfjs-node-gpu.
    policy: {
      rollout: 'auto',
      model: BASE_CHECKPOINT,
      runtime: 'auto',
      optimizer: { lr: 3e-5, weightDecay: 0, maxGradNorm: 1, paramGroups: [{ params: ['model.norm.weight'], lr: 2e-2 }] },
    },
  },
  agents: {
    solver: { model: 'policy', prompt: SOLVER_PROMPT, sampling: { temperature: 1, topP: 1, maxNewTokens: 56 }, invalidPenalty: 0.1 },
    verifier: {
      model: 'policy',
      prompt: VERIFIER_PROMPT,
      sampling: { temperature: 1, topP: 1, maxNewTokens: 72 },
      invalidPenalty: 0.1,
      stop: ['</verify>'],
    },
  },
  orchestra: { name: 'math', maxLoops: 2 },
  // 40% of the base's right answers follow a false step; rewarding only clean ones lifted all four seeds (+2.4 on average).
  env: { name: 'math', levels: [1, 2], testSize: 64, seed: 0, checkSteps: true },
  rollout: { promptsPerStep: 8, samplesPerPrompt: 4 },
  reward: { allocator: 'drmas' },
  algorithm: { advantage: 'drmas' },
  eval: { k: 16, every: 0, atEnd: true, tasks: 64 },
  trainer: { steps: 30, seed: 0, saveEvery: 10, keepLast: 2 },
};

/** `presets: ['math']`: the Dr. MAS math workflow with every plugin it needs, and the `math-four-agent` workflow. */
export const mathPreset: Preset = {
  name: 'math',
  plugins: ['algorithms', 'backend-onnx', 'trainer', 'env-math', 'orchestra', 'report', mathWorkflowsPlugin],
  optionalPlugins: [OPTIONAL_TFJS_ENGINE],
  config: MATH_DEFAULTS,
};

export default definePreset(() => mathPreset);
