export type { DebateTask } from './tasks/DebateTask.js';
export {
  isHeldOutMotion,
  MATH_DEBATE_SOURCE,
  MOTION_SOURCE,
  syntheticDebateTasks,
  syntheticMotions,
  type SyntheticDebateOptions,
} from './tasks/syntheticDebateTasks.js';
export { loadDebateDataset, splitDebateTasks } from './tasks/loadDebateDataset.js';
export { debateTranscriptSchema, parseTranscript, type DebateTranscript } from './judge/transcript.js';
export { parseVerdict, type Verdict } from './judge/parseVerdict.js';
export { DEFAULT_JUDGE_WEIGHTS, evidenceOf, judgeByRules, structureOf, type AgentJudgement, type JudgeWeights } from './judge/ruleJudge.js';
export { DebateEnvironment, DebateEpisode, judgeDebate, type DebateJudgement } from './environment/DebateEnvironment.js';
export {
  debateEnvKeys,
  debateEnvSettings,
  debateSection,
  type DebateEnvSettings,
  type DebateEnvSettingsInput,
} from './environment/debateEnvConfig.js';
export { EnvDebatePlugin, PLUGIN_NAME } from './plugin/EnvDebatePlugin.js';
export { default } from './plugin/EnvDebatePlugin.js';
