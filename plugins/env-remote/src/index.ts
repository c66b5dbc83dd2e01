export { PROTO_FILE, SERVICE_NAME, environmentService } from './protocol/environmentProtocol.js';
export type {
  ActionMessage,
  EnvironmentMethods,
  EnvironmentSpecMessage,
  EpisodeStateMessage,
  HealthReplyMessage,
  MethodName,
  TaskMessage,
} from './protocol/environmentProtocol.js';
export {
  EnvironmentServer,
  MAX_TASKS_PER_CALL,
  SERVER_DEFAULTS,
  type EnvironmentServerOptions,
  type ServedEnvironment,
} from './server/EnvironmentServer.js';
export { loadServedEnvironments, type ServedEnvironments } from './server/servedEnvironments.js';
export { RemoteCallError, ServerConnection, type CallCounts, type CallPolicy } from './client/ServerConnection.js';
export { RemoteEnvironment, RemoteEpisode, type RemoteStats, type RemoteTask } from './environment/RemoteEnvironment.js';
export { remoteEnvKeys, remoteEnvSettings, remoteSettings, type RemoteSettings } from './environment/remoteEnvConfig.js';
export { EnvRemotePlugin, PLUGIN_NAME } from './plugin/EnvRemotePlugin.js';
export { default } from './plugin/EnvRemotePlugin.js';
