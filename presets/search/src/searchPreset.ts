import { fileURLToPath } from 'node:url';
import { OPTIONAL_TFJS_ENGINE } from '@drmas/plugin-trainer';
import { definePreset, type Preset, type UserConfig } from '@drmas/core';
import { searchWorkflowsPlugin } from './workflows/searchWorkflows.js';

/** The base checkpoint shipped with the preset (supervised warm-up of `tiny`; rebuild with `npm run build-base`). */
export const BASE_CHECKPOINT = fileURLToPath(new URL('../checkpoints/base/policy', import.meta.url));

/**
 * Short prompts: the tiny models read every prompt token on a CPU. The observation holds the question and the
 * searches with their `<information>`; the team context is left out, since which agent runs already says what the
 * Verifier decided.
 */
export const VERIFIER_PROMPT = 'Verify: {observation}';
export const SEARCHER_PROMPT = 'Search: {observation}';
export const ANSWERER_PROMPT = 'Answer: {observation}';

/**
 * Defaults of the search preset; the user's config wins over each key. One row per micro-batch: prompts with their
 * information blocks run to ~600 tokens, and padding rows of mixed lengths costs more on a CPU than it saves (wider
 * micro-batches also exhaust the wasm runtime's memory).
 */
export const SEARCH_DEFAULTS: Partial<UserConfig> = {
  models: {
    // No `backend`: `auto` trains on onnx on a CPU. From seed 0 the 30-step runs on onnx and on tfjs gave the same
    // outcome at each of the first 23 steps and held-out avg@16 3.8% and 4.7% (pass@16 14.1%, 15.6%), onnx 2.5x faster per step.
    policy: {
      rollout: 'auto',
      model: BASE_CHECKPOINT,
      runtime: 'auto',
      optimizer: { lr: 1e-4, weightDecay: 0, maxGradNorm: 1 },
    },
  },
  agents: {
    verifier: {
      model: 'policy',
      prompt: VERIFIER_PROMPT,
      sampling: { temperature: 1, topP: 1, maxNewTokens: 16 },
      invalidPenalty: 0.01,
      stop: ['</verify>'],
      train: { microBatchSize: 1 },
    },
    searcher: {
      model: 'policy',
      prompt: SEARCHER_PROMPT,
      sampling: { temperature: 1, topP: 1, maxNewTokens: 40 },
      invalidPenalty: 0.01,
      stop: ['</search>'],
      train: { microBatchSize: 1 },
    },
    answerer: {
      model: 'policy',
      prompt: ANSWERER_PROMPT,
      sampling: { temperature: 1, topP: 1, maxNewTokens: 32 },
      invalidPenalty: 0.01,
      stop: ['</answer>'],
      train: { microBatchSize: 1 },
    },
  },
  orchestra: { name: 'search' },
  env: { name: 'search', maxRounds: 4, entities: 300, topk: 2, seed: 0 },
  rollout: { promptsPerStep: 8, samplesPerPrompt: 5 },
  reward: { allocator: 'drmas' },
  algorithm: { advantage: 'drmas' },
  eval: { k: 16, every: 0, atEnd: true, tasks: 64, tasksPerBatch: 4 },
  trainer: { steps: 30, seed: 0, saveEvery: 10, keepLast: 2 },
};

/**
 * `presets: ['search']`: the Dr. MAS search workflow with every plugin it needs, and the UnityMAS-O search workflows
 * (`orchestra.name: m-ask`, `qd-rag`, `qd-rag-evidence`; see examples/workflows).
 */
export const searchPreset: Preset = {
  name: 'search',
  plugins: ['algorithms', 'backend-onnx', 'trainer', 'env-search', 'orchestra', 'report', searchWorkflowsPlugin],
  optionalPlugins: [OPTIONAL_TFJS_ENGINE],
  config: SEARCH_DEFAULTS,
};

export default definePreset(() => searchPreset);
