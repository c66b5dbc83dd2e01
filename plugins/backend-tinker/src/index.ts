export {
  default,
  TinkerBackendPlugin,
  tinkerBackendFactory,
  tinkerSettingsSchema,
  TINKER_BACKEND,
  type TinkerSettings,
} from './plugin/TinkerBackendPlugin.js';
export {
  TinkerPolicyBackend,
  TINKER_CHECKPOINT_FILE,
  type TinkerBackendOptions,
  type TinkerCheckpointPointer,
} from './TinkerPolicyBackend.js';
export { TinkerClient, type CallOptions, type FutureStats, type TinkerClientOptions } from './client/TinkerClient.js';
export * as tinkerWire from './client/tinkerWire.js';
export { logProbGradient, type LogProbGradient, type TokenColumns } from './training/logProbGradient.js';
export { TinkerServer, type TinkerServerOptions } from './server/TinkerServer.js';
export { TrainingModels, WEIGHTED_CROSS_ENTROPY, type EngineFactory } from './server/TrainingModels.js';
export { FutureQueue, RequestFailure, DEFAULT_FUTURE_POLICY, type FuturePolicy, type PollAnswer } from './server/FutureQueue.js';
export { localEngines, openLocalEngines, type LocalEngineOptions } from './server/localEngines.js';
export { tinkerServerCommand } from './cli/tinkerServerCommand.js';
