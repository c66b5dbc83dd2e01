export { default, TrainerPlugin } from './TrainerPlugin.js';
export { planWorkerGroups, type WorkerGroupPlan, type WorkerGroupTraining } from './workerGroupPlan.js';
export { WorkerGroupsService, type TrainedWorkerGroup } from './WorkerGroupsService.js';
export { describeAutoRollout } from './rolloutEngine.js';
/** The presets' optional tfjs engine (its definition is the models package's, beside the engines the CLI loads). */
export { OPTIONAL_TFJS_ENGINE } from '@drmas/models';
export { updateWorkerGroup, type OldLogProbSource, type WorkerGroupUpdate } from './updateWorkerGroup.js';
export { LearningRateSchedule } from './optimizer/LearningRateSchedule.js';
export {
  optimizerSection,
  spikeGuardSection,
  trainerSection,
  trainOverridesSection,
  type OptimizerSection,
  type ScheduleKind,
  type SpikeGuardSettings,
  type TrainerSection,
  type TrainOverrides,
} from './config/trainingConfig.js';
export { batchMetrics } from './stepMetrics.js';
export { GradNormSpikeGuard, SpikeGuards, type SpikeVerdict } from './spikeGuard/GradNormSpikeGuard.js';
export { appendRollouts } from './RolloutLog.js';
export { restoreCheckpoint, saveCheckpoint } from './Checkpoints.js';
export { sft as sftCommand, demonstrationTurn, readDemonstrations, type Demonstration } from './cli/sftCommand.js';
export { dpo as dpoCommand } from './cli/dpoCommand.js';
export { pairRows, preferenceBatch, readPreferencePairs, type PreferencePair, type TurnPair } from './preference/preferencePairs.js';
export { BUILTIN_CRITIC_LEARNERS, CriticLearner } from './critic/CriticLearner.js';
export {
  agentRewardMetrics,
  diagnoseTurnRewards,
  type AgentRewardStatistics,
  type TurnRewardDiagnosis,
  type TurnRewards,
} from './agentDiagnostics/agentRewardStatistics.js';
