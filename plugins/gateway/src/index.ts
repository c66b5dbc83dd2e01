export { default, AgenticRolloutPlugin, PLUGIN_NAME } from './rollout/AgenticRolloutPlugin.js';
export { gatewaySection, type GatewaySettings } from './rollout/gatewayConfig.js';
export { loadAgentFunction, type AgentFunction, type EpisodeContext, type GatewayConnection } from './rollout/agentFunction.js';
export { sessionTrajectory, type TrajectoryIds } from './rollout/sessionTrajectory.js';
export { Gateway, GATEWAY_DEFAULTS, type GatewayOptions } from './Gateway.js';
export { GatewayServer, SESSION_HEADER, AGENT_HEADER, type GatewayServerOptions } from './server/GatewayServer.js';
export { OpenAiError, type OpenAiErrorType } from './server/OpenAiError.js';
export { ServedModels, type ServedModel } from './engine/ServedModels.js';
export {
  MicroBatcher,
  type MicroBatchOptions,
  type MicroBatchStats,
  type SampleRequest,
  type SampleResult,
} from './engine/MicroBatcher.js';
export { Sessions, SessionError, type CapturedTurn, type Session } from './capture/Sessions.js';
export { gatewayCommand } from './cli/gatewayCommand.js';
