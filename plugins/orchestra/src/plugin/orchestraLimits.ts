/**
 * Caps of the orchestra's count settings that need no fact about the run; what the model's positions and the memory
 * budget allow is checked at `validate` (rolloutLimits.ts).
 */
export const ORCHESTRA_LIMITS = Object.freeze({
  promptsPerStep: 65_536,
  samplesPerPrompt: 4_096,
  maxLoops: 100,
  /** Solvers of majority voting and summary (K), debaters and debate rounds: each is a generate call per episode. */
  solvers: 64,
  debaters: 16,
  rounds: 32,
  maxNewTokens: 1_048_576,
  evalK: 4_096,
  evalTasks: 1_000_000,
  maxBatchSize: 65_536,
  maxWaitMs: 60_000,
  maxInflightEpisodes: 1_048_576,
  modelConcurrency: 64,
  timeoutMs: 86_400_000,
});
