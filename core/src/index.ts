import 'reflect-metadata';

export * as inversify from 'inversify';
export { Container, ContainerModule, injectable, named, optional } from 'inversify';
export { inject, multiInject } from './di/injection.js';
export { allOf, chosenBy, type AllOf, type ChosenBy, type Dependencies, type Injected } from './di/Dependencies.js';
export * as tapable from 'tapable';
export {
  AsyncParallelHook,
  AsyncSeriesBailHook,
  AsyncSeriesHook,
  AsyncSeriesWaterfallHook,
  SyncBailHook,
  SyncHook,
  SyncWaterfallHook,
} from 'tapable';
export { z } from 'zod';

export { DrmasError, type DrmasErrorCode, type DrmasErrorDetails } from './errors/DrmasError.js';
export { closestMatches, didYouMean, editDistance } from './errors/didYouMean.js';

export { Kernel, type KernelOptions, type RunOptions, type SetupOptions } from './kernel/Kernel.js';
export type { ApplyContext } from './kernel/ApplyContext.js';
export { RolloutService } from './kernel/RolloutService.js';
export { createKernel, type KernelSetup } from './kernel/createKernel.js';
export { createKernelHooks, HOOK_NAMES, type HookName, type KernelHooks } from './kernel/KernelHooks.js';
export { Stage, type StageName } from './kernel/stages.js';
export { TimingInterceptor } from './kernel/TimingInterceptor.js';
export { TapLedger, type TapRecord } from './kernel/TapLedger.js';
export { attributeTapError, PluginErrorInterceptor, type TapFailure, type TapOwner } from './kernel/PluginErrorInterceptor.js';

export { createToken, isToken, serviceIdentifier, type ServiceKey, type Token } from './di/Token.js';
export { BindingLedger, describeKey, type BindingRecord } from './di/BindingLedger.js';
export { translateContainerError } from './di/containerErrors.js';
export type { RegisterContext } from './di/RegisterContext.js';
export { AdvantageEstimator, rolesReadingValues, type AdvantageScope } from './services/AdvantageEstimator.js';
export {
  AUTO_BACKEND,
  BackendFactory,
  CAPABILITY_TEXT,
  ENGINE_CAPABILITIES,
  type EngineCapability,
  type EnginePurpose,
} from './engines/BackendFactory.js';
export { Engines, type EngineChoice, type EngineRequest, type EngineSkip } from './engines/Engines.js';
export { EngineService, expectedTrainingFactory, rankEngines } from './engines/EngineService.js';
export { EnginesPlugin } from './engines/EnginesPlugin.js';
export { MetricsSink } from './services/MetricsSink.js';
export { RunFile } from './services/RunFile.js';
export { RunDirectoryLock } from './services/RunDirectoryLock.js';
export { Contributions, Roles } from './services/Contributions.js';
export { Rollouts, type RerunRequest } from './services/Rollouts.js';
export { coreRoles, coreServices } from './services/coreServices.js';
export { BATCH_INPUTS, BatchInputSource, type BatchInput } from './services/BatchInputSource.js';
export { Checkpointable } from './services/Checkpointable.js';
export { Environment, type EnvAction, type EnvTask, type EnvTaskBatch, type Episode } from './services/Environment.js';
export { AnswerFormat } from './services/AnswerFormat.js';
export { QuestionSet, type Question, type QuestionRequest } from './services/QuestionSet.js';
export { defineTool, Tool, type ToolContext, type ToolTaskContent, type ToolTaskKind } from './services/Tool.js';
export { InfoSection } from './services/InfoSection.js';
export { MemoryEstimates, type MemoryEstimateReport } from './services/MemoryEstimates.js';
export { WorkerGroups, type PlannedWorkerGroup, type WorkerGroup } from './services/WorkerGroups.js';
export type { ChatMessage, TextCodec } from './compute/TextCodec.js';

export {
  definePlugin,
  definePreset,
  isPlugin,
  type Plugin,
  type PluginFactory,
  type PluginSpec,
  type Preset,
  type PresetFactory,
  type PresetSpec,
} from './plugins/Plugin.js';
export { PluginLoader, type LoadedPlugin, type LoadedPreset, type ModuleOrigin } from './plugins/PluginLoader.js';
export { absentPluginError, type AbsentPlugin, type OptionalPluginSpec } from './plugins/absentPlugins.js';
export { candidatePackageNames, shortName } from './plugins/packageNames.js';

export {
  defineConfig,
  type AgentConfig,
  type AlgorithmConfig,
  type ConfigSections,
  type EnvConfig,
  type EvalConfig,
  type ModelConfig,
  type PresetConfig,
  type TrainerConfig,
  type UserConfig,
} from './config/UserConfig.js';
export { ResolvedConfig, type AgentSettings, type ModelSettings } from './config/ResolvedConfig.js';
export type { ConfigSchema, PluginConfig } from './config/PluginConfig.js';
export { resolveConfig, type ConfigResolution, type ResolveConfigOptions } from './config/resolveConfig.js';
export { CONFIG_SEARCH_PLACES, loadConfigFile } from './config/ConfigFile.js';
export { coerceOverride, parseOverride, type Override } from './config/overrides.js';
export {
  buildConfigSchema,
  ENTRY_SECTIONS,
  envSection,
  LIMITS,
  rolloutEngineKey,
  rolloutEngineName,
  schemaAt,
  type EnvSettings,
  type RolloutServer,
} from './config/configSchema.js';

export { REDACTED, redactUrl, redactUrlsInText, urlCredentials } from './secrets/redactUrl.js';
export { secret, secretEnvName, secretKindOf, secretUrl, type SecretKind } from './secrets/secretSchema.js';
export { redactedLeaf, redactValue, secretLeaves, type SecretLeaf } from './secrets/secretLeaves.js';
export { ConfigSecrets, MIN_SECRET_CHARS, Secrets, type SecretEnv } from './secrets/Secrets.js';

export { agent, agentName, type AgentConstructor } from './agents/agent.js';
export { Agent, AgentRegistry } from './agents/AgentRegistry.js';

export type { Trajectory, Turn, TurnFields, TurnKey, RolloutBatch } from './data/Turn.js';
export { makeTrajectoryTurns, makeTurn } from './data/Turn.js';
export {
  ID_NAMES,
  idColumn,
  scoringTemperature,
  TrainingBatch,
  type BatchIds,
  type IdColumn,
  type IdName,
  type PreferencePairs,
} from './data/TrainingBatch.js';
export {
  longestResponse,
  lossTotals,
  partMicroBatches,
  type MicroBatchTokens,
  responseValues,
  rowsWithAdvantage,
  rowTrains,
  selectRows,
  trainedColumns,
  type BatchView,
  type TrainedColumns,
  type WorkerGroupBatch,
} from './data/BatchView.js';
export type { Distributions, EvalContext, Metrics, RunContext, StepContext, StepResult } from './data/StepContext.js';
export { debateTranscriptSchema, parseTranscript, TRANSCRIPT_SUBMISSION, type DebateTranscript } from './data/DebateTranscript.js';
export {
  firstRecordText,
  QUESTION_FIELDS,
  readTaskRecords,
  recordPlaceText,
  datasetInvalid,
  noTrainingTaskLeft,
  recordText,
  recordValue,
  type TaskFileError,
  type TaskRecord,
  type TaskRecordPlace,
} from './tasks/taskRecordFiles.js';
export { EpochSchedule } from './tasks/EpochSchedule.js';
export { TaskPool } from './tasks/TaskPool.js';

export type {
  GenerateRequest,
  GenerateResult,
  OptimizerSettings,
  MomentPrecision,
  ParamGroupSettings,
  PolicyBackend,
  RatioDenominator,
  SamplingParams,
  ScoreRequest,
  ScoreResult,
  TopLogProb,
  TrainingSnapshot,
  UpdateRequest,
  UpdateResult,
  WeightTensor,
} from './compute/PolicyBackend.js';
export { assignParamGroups, ParamGroupError } from './compute/paramGroups.js';
export {
  isLoraTargetModule,
  LORA_TARGET_MODULES,
  type LoraEngineSettings,
  type LoraSettings,
  type LoraTargetModule,
} from './compute/loraSettings.js';
export { scoreSequences } from './compute/scoreSequences.js';
export { hostGradients, hostTensor, hostTensorOps, type HostTensor } from './compute/hostTensorOps.js';
export {
  LossFunction,
  lossColumn,
  lossColumnsOf,
  lossTotalsInput,
  type LossColumn,
  type LossInput,
  type LossOutput,
  type LossTotals,
  type LossTotalsInput,
  type TensorOps,
} from './compute/TensorOps.js';
export type {
  CriticContexts,
  ValueLossFunction,
  ValueLossInput,
  ValueModel,
  ValuesRequest,
  ValueUpdateRequest,
} from './compute/ValueModel.js';

export { Rng, SeededRng, type RngState } from './random/Rng.js';
export { shuffledIndices, SplitMix32 } from './random/SplitMix32.js';
export { fmix32, fnv1a, hashFraction, hashParts, hashString } from './random/hash.js';

export { extractBoxedAnswer, finalAnswerSection, hasBoxCommand, readBraceGroup } from './answers/boxedAnswer.js';
export {
  containsCjk,
  parseTaggedOutput,
  splitThink,
  type OutputFormat,
  type ParsedOutput,
  type TaggedAction,
} from './answers/taggedOutput.js';
export { exactMatch, normalizeAnswer, tokenF1 } from './answers/exactMatch.js';
export {
  parseToolCallText,
  TOOL_CALL_FORMATS,
  TOOL_CALL_OPEN,
  toolCallFormatOf,
  type ParsedToolCall,
  type ToolCallBlock,
  type ToolCallFormat,
  type ToolCallParse,
} from './answers/toolCalls.js';
export { ECHO_CHARS, echoJson, echoText } from './errors/echoText.js';
export {
  credentialsFromUrl,
  describeConnectionFailure,
  fetchText,
  isTransientStatus,
  parseRetryAfter,
  serverMessage,
  type FetchTextInit,
  type HttpAnswer,
  type NoAnswer,
} from './net/fetchText.js';
export { retryDelay, retrying, type FailedTry, type RetriesExhausted, type RetrySchedule, type TryOutcome } from './net/retrying.js';

export {
  checkpointDirName,
  CHECKPOINT_FORMAT,
  CHECKPOINT_STATE_FILE,
  CHECKPOINTS_DIR,
  checkWorkerGroups,
  listCheckpoints,
  readTrainerState,
  type TrainerState,
} from './checkpoint/checkpointLayout.js';
export {
  CHECKPOINT_MANIFEST_FILE,
  readCheckpointManifest,
  sha256File,
  writeCheckpointManifest,
  type CheckpointManifest,
  type ManifestEntry,
} from './checkpoint/checkpointManifest.js';
export { resolveResume, verifyCheckpoint, type ResumeChoice, type VerifiedCheckpoint } from './checkpoint/verifyCheckpoint.js';
export { CORE_RUN_FILES, cutStepLines, setAsideEarlierRun, setAsideLaterCheckpoints, type CutResult } from './run/runFiles.js';
export { planEvaluation, planRun, type RunPlan } from './run/runDirectory.js';
export { createOutputDirectory } from './run/outputDirectory.js';
export {
  acquireRunLock,
  isProcessAlive,
  runLockHolder,
  RUN_LOCK_FILE,
  RUN_LOCK_HANDOVER_ENV,
  type RunLock,
  type RunLockHolder,
} from './run/runLock.js';
export { BYTE_SIZE, DEFAULT_MEMORY_SHARE, formatBytes, parseByteSize, resolveMemoryBudget, type MemoryBudget } from './run/memoryBudget.js';
export { AdvantagePlugin } from './builtins/AdvantagePlugin.js';
export { JsonlMetricsSink, RunDirectoryPlugin, RunLockFile } from './builtins/RunDirectoryPlugin.js';

export { main, BUILTIN_COMMANDS } from './cli/main.js';
export { CONFIG_HELP, CONFIG_OPTIONS, type CliCommand, type CliIO, type OptionSpec } from './cli/CliCommand.js';
export { integerOption, numberOption, type NumericOptionSpec } from './cli/optionValues.js';
export { discoverCommands, loadDiscoveredCommand, type DiscoveredCommand } from './cli/commandDiscovery.js';
