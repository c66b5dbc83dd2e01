import { fileURLToPath } from 'node:url';
import { OPTIONAL_TFJS_ENGINE } from '@drmas/plugin-trainer';
import { definePreset, type Preset, type UserConfig } from '@drmas/core';
import { MATH_DEFAULTS } from '@drmas/preset-math';

/** The base checkpoint shipped with the preset (the math base after a warm-up on debates; rebuild with `npm run build-base`). */
export const BASE_CHECKPOINT = fileURLToPath(new URL('../checkpoints/base/policy', import.meta.url));

/**
 * The debaters' prompt: the math preset's Solver prompt, so the warm-up starts from a model that already solves
 * (the second debater sees the first's answer as team context, as a retried Solver sees its first attempt).
 */
export const DEBATER_PROMPT = 'Solve: {question}\n{team_context}';

const debater = { model: 'policy', prompt: DEBATER_PROMPT, sampling: { temperature: 1, topP: 1, maxNewTokens: 56 }, invalidPenalty: 0.1 };

/** Defaults of the debate preset; the user's config wins over each key. */
export const DEBATE_DEFAULTS: Partial<UserConfig> = {
  // The math preset's model settings (the base continues the math base): only the checkpoint differs.
  models: { policy: { ...MATH_DEFAULTS.models!.policy!, model: BASE_CHECKPOINT } },
  agents: { pro: debater, con: debater },
  orchestra: { name: 'debate', debaters: ['pro', 'con'], rounds: 1, judge: 'none' },
  env: { name: 'debate', seed: 0, debate: { tasks: 'math', levels: [1, 2], testSize: 64, reward: 'score' } },
  rollout: { promptsPerStep: 8, samplesPerPrompt: 4 },
  reward: { allocator: 'per_turn' },
  algorithm: { advantage: 'drmas' },
  eval: { k: 8, every: 0, atEnd: true, tasks: 64 },
  trainer: { steps: 30, seed: 0, saveEvery: 10, keepLast: 2 },
};

/**
 * `presets: ['debate']`: PRO and CON debating arithmetic questions on env-debate, with every plugin it needs (env-math
 * brings the `math` questions and the `math` answer format the debates are judged by).
 */
export const debatePreset: Preset = {
  name: 'debate',
  plugins: ['algorithms', 'backend-onnx', 'trainer', 'env-math', 'env-debate', 'orchestra', 'report'],
  optionalPlugins: [OPTIONAL_TFJS_ENGINE],
  config: DEBATE_DEFAULTS,
};

export default definePreset(() => debatePreset);
