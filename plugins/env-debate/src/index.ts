export type { DebateTask } from './tasks/DebateTask.js';
export { debateSource, debateTasks, isHeldOutMotion, motionQuestionSet, syntheticMotions } from './tasks/debateQuestions.js';
export { loadDebateDataset, splitDebateTasks } from './tasks/loadDebateDataset.js';
export { parseVerdict, type Verdict } from './judge/parseVerdict.js';
export { DEFAULT_JUDGE_WEIGHTS, evidenceOf, judgeByRules, structureOf, type AgentJudgement, type JudgeWeights } from './judge/ruleJudge.js';
export {
  DebateEnvironment,
  DebateEpisode,
  judgeDebate,
  type DebateJudgement,
  type DebateJudging,
  type NamedContributions,
} from './environment/DebateEnvironment.js';
export {
  debateEnvKeys,
  debateEnvSettings,
  debateSection,
  type DebateEnvSettings,
  type DebateEnvSettingsInput,
} from './environment/debateEnvConfig.js';
export { EnvDebatePlugin, PLUGIN_NAME } from './plugin/EnvDebatePlugin.js';
export { default } from './plugin/EnvDebatePlugin.js';
