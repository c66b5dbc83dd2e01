export { AlgorithmInputError } from './errors.js';
export type { Matrix, FloatBuffer, RowVector } from './matrix.js';

export { computeAdvantage, estimateView, type BatchAdvantageOptions } from './computeAdvantage.js';
export type {
  AdvantageColumns,
  AdvantageInput,
  AdvantageOptions,
  AdvantageResult,
  EstimatorDefinition,
  EstimatorView,
  ResolvedAdvantageOptions,
  RequiredInput,
  StatisticsUnit,
  EstimatorState,
} from './estimators/types.js';
export { RoleBaselines } from './estimators/rae.js';
export { STATISTICS_UNITS } from './estimators/types.js';
export { ADVANTAGE_ESTIMATORS, type BuiltinEstimatorName } from './estimators/builtinEstimators.js';

export { GROUP_KEYS, GROUP_KEY_NAMES, type GroupKey, type GroupKeyFn, type GroupKeyName } from './grouping/groupKeys.js';
export type { Coding } from './grouping/coding.js';
export { similarityRatio } from './grouping/sequenceMatcher.js';

export { LOSS_AGGREGATIONS, type LossAggregation } from './losses/aggregation.js';
export { KL_PENALTY_KINDS, type KlPenaltyKind } from './losses/klPenalty.js';
export { PolicyLossFunction, TRAINABLE_VARIANTS, type PolicyLossSettings, type TrainableVariant } from './losses/ppoClipLoss.js';
export { NllLossFunction } from './losses/nllLoss.js';
export { ClippedValueLoss, type ValueLossSettings } from './losses/valueClipLoss.js';
export { DpoLossFunction, DPO_VARIANTS, checkDpoSettings, type DpoSettings, type DpoVariant } from './losses/dpoLoss.js';

export { VdnMixer, type ValueMixer, type MixedValue, type MixerSample } from './mixers/valueMixer.js';
export { QmixMixer, type QmixShape, type QmixState, type MixerOptimizerSettings } from './mixers/qmixMixer.js';
export { agentCredits, tdLambdaTargets, type AgentCredit } from './mixers/teamCredit.js';

export { zeroStdGroups, type ZeroStdGroupSummary } from './sampling/zeroStdGroups.js';
export {
  selectGroupsWithVariance,
  DynamicSamplingAccumulator,
  type DynamicSamplingResult,
  type DynamicSamplingStatus,
  type GroupSelection,
  type KeptGroup,
  type GroupId,
} from './sampling/dynamicSampling.js';

export { default, AlgorithmsPlugin, lossSettings, roleOptions } from './plugin/AlgorithmsPlugin.js';
export {
  advantageOptionsSection,
  algorithmSection,
  type AdvantageOptionsSettings,
  type AlgorithmSettings,
} from './plugin/algorithmConfig.js';
export { BatchEstimator, reportAdvantages, type RoleOptions } from './plugin/BatchEstimator.js';
export { evaluateSamples, passAtK, type SampleSummary, type TaskSamples } from './evaluation/passAtK.js';
